// The zero-point algebra and the ±128 sign shift, in one place.
//
// Every int8 kernel multiplies "u8-domain" A' (0..255) by "s8-domain" B'
// (-128..127). The driver maps each input onto that form at pack time:
//
//   a' = a + sa,  sa = 128 if A is int8 (a' = a XOR 0x80), 0 if uint8
//   b' = b - sb,  sb = 128 if B is uint8 (b' = b XOR 0x80), 0 if int8
//
// so a - za = a' - za'  with  za' = za + sa,  and  b - zb = b' - zb'  with
// zb' = zb - sb. Expanding the product over k = 0..K-1:
//
//   C[i][j] = sum_k (a'[i][k] - za'[i]) * (b'[k][j] - zb'[j])
//           = sum_k a'b'  -  zb'[j] * rowsum(a')[i]  -  za'[i] * colsum(b')[j]
//             +  K * za'[i] * zb'[j]
//
// The kernel supplies sum_k a'b'; packing supplies rowsum(a') and
// colsum(b'). One kernel family folds za' in instead: the AVX2 raw-B
// kernels (raw_b_small_m.h), whose int16 pairs hold a' - za', supply
// sum_k (a' - za')b' = sum_k a'b' - za' * colsum(b') and report colsum(b')
// as 0, so the same expression gives the same C. All terms are evaluated in wrapping 32-bit arithmetic, which
// is exact modulo 2^32, so C equals the wrapped int32 of SEMANTICS.md §3 for
// any inputs, per-tensor, per-row, per-column or per-batch zero points alike.
#pragma once

#include <cstdint>

#include "qmatmul/types.h"

namespace qmatmul::gemm {

// The shift that maps a value of `type` into the kernel's A domain (u8).
inline int32_t a_domain_shift(ElementType type) { return type == ElementType::Int8 ? 128 : 0; }
// The shift subtracted to map a value of `type` into the kernel's B domain (s8).
inline int32_t b_domain_shift(ElementType type) { return type == ElementType::Uint8 ? 128 : 0; }

inline int32_t effective_a_zero_point(int32_t za, ElementType a_type) { return za + a_domain_shift(a_type); }
inline int32_t effective_b_zero_point(int32_t zb, ElementType b_type) { return zb - b_domain_shift(b_type); }

// C from the raw kernel sum and the precomputed terms, wrapping mod 2^32.
inline int32_t apply_zero_points(int32_t raw, int32_t row_sum_a, int32_t col_sum_b, int32_t za,
                                 int32_t zb, int64_t k) {
  const uint32_t c = static_cast<uint32_t>(raw) - static_cast<uint32_t>(zb) * static_cast<uint32_t>(row_sum_a) -
                     static_cast<uint32_t>(za) * static_cast<uint32_t>(col_sum_b) +
                     static_cast<uint32_t>(k) * static_cast<uint32_t>(za) * static_cast<uint32_t>(zb);
  return static_cast<int32_t>(c);
}

// The same terms regrouped for the vectorized epilogues, still mod 2^32:
//   C = raw - zb'[j] * (rowsum(a')[i] - K * za'[i]) - za'[i] * colsum(b')[j]
// so each row contributes one scalar, this row term, and za' * colsum is one
// vector per column group (per tile when za' is the same for its rows).
inline int32_t zero_point_row_term(int32_t row_sum_a, int64_t k, int32_t za) {
  return static_cast<int32_t>(static_cast<uint32_t>(row_sum_a) - static_cast<uint32_t>(k) * static_cast<uint32_t>(za));
}

// The column term of that form, -za' * colsum(b')[j], to be added:
//   C = raw - zb'[j] * row_term + column_term
// With zb' = 0 it is the whole correction (a kernel's col_init).
inline int32_t zero_point_column_term(int32_t col_sum_b, int32_t za) {
  return static_cast<int32_t>(0u - static_cast<uint32_t>(za) * static_cast<uint32_t>(col_sum_b));
}

}  // namespace qmatmul::gemm

// AVX-512 decoding of float8 and int8/uint8 operands for the float8 GEMM
// (float8_gemm_avx512.cpp, its only includer, compiled with AVX-512
// F/BW/DQ/VL): 32 codes to 32 float32 values in registers (decode32), and
// the chunk decoders that fill the driver's buffers: float32 layouts for the
// FMA tiles, and bfloat16 pair layouts (float8_bf16_tile.h) for the BF16
// tile. Everything has internal linkage: each includer gets its own copy,
// built with its own flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "gemm/float8_gemm.h"

namespace qmatmul::gemm::detail {
namespace {

using ET = ElementType;

constexpr int NR = 32;                // columns per register tile and per B panel (two zmm)
constexpr int64_t kPrefetchRows = 8;  // B rows prefetched ahead while decoding a chunk

inline __mmask16 tail16(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u); }

// ---- decoding: 32 codes -> 32 float32 values, the values of the tables ----
// Float8 codes are rebuilt as float16 bit patterns in 16-bit lanes (32 at
// a time) and widened with vcvtph2ps, which converts float16 subnormals
// exactly: e5m2 is the top byte of a float16 (Inf and NaN included); e4m3
// moves its 7 magnitude bits down one place and is scaled by 2^(15 - bias);
// e5m2fnuz is e5m2 scaled by 1/2, except its top binade (exponent 31, finite
// in fnuz), taken one float16 binade lower and left unscaled. NaN codes are
// then patched (payloads may differ from the tables': only NaN-ness matters).

inline __mmask16 lo16(__mmask32 m) { return static_cast<__mmask16>(m); }
inline __mmask16 hi16(__mmask32 m) { return static_cast<__mmask16>(m >> 16); }

template <ET T>
inline void decode32(__m256i bytes, __m512* out) {
  if constexpr (T == ET::Uint8) {
    out[0] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(bytes)));
    out[1] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(bytes, 1)));
  } else if constexpr (T == ET::Int8) {
    out[0] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(bytes)));
    out[1] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(bytes, 1)));
  } else {
    const __m512 qnan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000));
    const __m512i c = _mm512_cvtepu8_epi16(bytes);
    __m512i h;                   // float16 bits
    __mmask32 nan = 0;           // lanes to patch to NaN
    __mmask32 top = 0;           // e5m2fnuz: exponent 31
    if constexpr (T == ET::Float8E5M2 || T == ET::Float8E5M2FNUZ) {
      h = _mm512_slli_epi16(c, 8);
      if constexpr (T == ET::Float8E5M2FNUZ) {
        top = _mm512_cmpeq_epi16_mask(_mm512_and_si512(c, _mm512_set1_epi16(0x7C)), _mm512_set1_epi16(0x7C));
        h = _mm512_mask_sub_epi16(h, top, h, _mm512_set1_epi16(0x0400));
        nan = _mm512_cmpeq_epi16_mask(c, _mm512_set1_epi16(0x80));
      }
    } else {
      const __m512i mag = _mm512_and_si512(c, _mm512_set1_epi16(0x7F));
      // (mag << 7) | (sign << 15): select bit 15 from c << 8, the rest from mag << 7.
      h = _mm512_ternarylogic_epi32(_mm512_slli_epi16(mag, 7), _mm512_slli_epi16(c, 8),
                                    _mm512_set1_epi16(static_cast<int16_t>(0x8000)), 0xD8);
      nan = T == ET::Float8E4M3FN ? _mm512_cmpeq_epi16_mask(mag, _mm512_set1_epi16(0x7F))
                                  : _mm512_cmpeq_epi16_mask(c, _mm512_set1_epi16(0x80));
    }
    __m512 v0 = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
    __m512 v1 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
    if constexpr (T == ET::Float8E4M3FN || T == ET::Float8E4M3FNUZ) {
      const __m512 scale = _mm512_set1_ps(T == ET::Float8E4M3FN ? 256.0f : 128.0f);  // 2^(15 - bias)
      v0 = _mm512_mul_ps(v0, scale);
      v1 = _mm512_mul_ps(v1, scale);
    } else if constexpr (T == ET::Float8E5M2FNUZ) {
      const __m512 half = _mm512_set1_ps(0.5f);
      v0 = _mm512_mask_mul_ps(v0, static_cast<__mmask16>(~lo16(top)), v0, half);
      v1 = _mm512_mask_mul_ps(v1, static_cast<__mmask16>(~hi16(top)), v1, half);
    }
    if constexpr (T != ET::Float8E5M2) {
      v0 = _mm512_mask_mov_ps(v0, lo16(nan), qnan);
      v1 = _mm512_mask_mov_ps(v1, hi16(nan), qnan);
    }
    out[0] = v0;
    out[1] = v1;
  }
}

inline __mmask32 tail32(int64_t n) { return n >= 32 ? ~__mmask32(0) : n <= 0 ? __mmask32(0) : (__mmask32(1) << n) - 1; }

// Top halves of 16 float32 values, as 16 bfloat16 patterns (exact for the
// values of Float8Problem::bf16_exact problems).
inline __m256i bf16_top_halves(__m512 v) { return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(v), 16)); }

// Columns [k0, k0+kc) of `rows` rows of A (`a` points at row 0, column k0;
// row stride K bytes) as a_f = f32(a) - za[r], row-major with stride lda
// (a multiple of 32 >= kc), as float32 (Elem = float) or as bfloat16
// patterns (Elem = uint16_t). Columns past kc up to the next multiple of 32
// are 0 (so a half-empty last bfloat16 pair is zero on the A side).
// `next` (or null) is the column pointer of the chunk decoded after this one:
// its rows are prefetched into L2, since a few lines in each of many rows
// defeat the hardware prefetcher.
template <ET T, typename Elem>
void decode_a_chunk(const uint8_t* a, int64_t K, int64_t rows, int64_t kc, const float* za, Elem* out,
                    int64_t lda, const uint8_t* next) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = a + r * K;
    if (next != nullptr)
      for (int64_t x = 0; x < kc; x += 64) _mm_prefetch(reinterpret_cast<const char*>(next + r * K + x), _MM_HINT_T1);
    const __m512 z = _mm512_set1_ps(za[r]);
    for (int64_t k = 0; k < kc; k += 32) {
      const __mmask32 m = tail32(kc - k);
      __m512 v[2];
      decode32<T>(_mm256_maskz_loadu_epi8(m, src + k), v);
      v[0] = _mm512_maskz_sub_ps(lo16(m), v[0], z);
      v[1] = _mm512_maskz_sub_ps(hi16(m), v[1], z);
      if constexpr (sizeof(Elem) == 4) {
        _mm512_storeu_ps(out + r * lda + k, v[0]);
        _mm512_storeu_ps(out + r * lda + k + 16, v[1]);
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * lda + k), bf16_top_halves(v[0]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * lda + k + 16), bf16_top_halves(v[1]));
      }
    }
  }
}

// B rows [k0, k0+kc) and columns [j0, j0+cols) as b_f = f32(b) - zb[j], into
// panels of NR columns: out[panel][kk][NR]. Columns past `cols` up to the
// panel edge are 0 (zb is zero-padded there too).
template <ET T>
void decode_b_chunk(const uint8_t* b, int64_t ldb, int64_t kc, int64_t cols, const float* zb, float* out) {
  static_assert(NR == 32);
  const int64_t panels = (cols + NR - 1) / NR;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const uint8_t* row = b + kk * ldb;
    for (int64_t x = 0; x < cols; x += 64)
      _mm_prefetch(reinterpret_cast<const char*>(row + kPrefetchRows * ldb + x), _MM_HINT_T0);
    for (int64_t g = 0; g < panels; ++g) {
      __m512 v[2];
      decode32<T>(_mm256_maskz_loadu_epi8(tail32(cols - g * NR), row + g * NR), v);
      float* dst = out + g * kc * NR + kk * NR;
      _mm512_store_ps(dst, _mm512_sub_ps(v[0], _mm512_loadu_ps(zb + g * NR)));
      _mm512_store_ps(dst + 16, _mm512_sub_ps(v[1], _mm512_loadu_ps(zb + g * NR + 16)));
    }
  }
}

// ---- bfloat16 pair layouts (float8_bf16_tile.h) ----
// Every value decoded here is exact in bfloat16 (Float8Problem::bf16_exact),
// so its bfloat16 pattern is the top half of its float32 pattern.

// As decode_b_chunk, into bfloat16 pair panels: out[panel][pair][NR] words,
// word j = (b_f[2p][j], b_f[2p+1][j]); a missing odd row (kc odd) is 0, as
// are columns past `cols`.
template <ET T>
void decode_b_chunk_bf16(const uint8_t* b, int64_t ldb, int64_t kc, int64_t cols, const float* zb, uint32_t* out) {
  const int64_t panels = (cols + NR - 1) / NR;
  const int64_t pairs = (kc + 1) / 2;
  const __m512i high_halves = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (int64_t p = 0; p < pairs; ++p) {
    const uint8_t* row0 = b + 2 * p * ldb;
    const bool has_odd = 2 * p + 1 < kc;
    for (int64_t x = 0; x < cols; x += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(row0 + kPrefetchRows * ldb + x), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(row0 + (kPrefetchRows + 1) * ldb + x), _MM_HINT_T0);
    }
    for (int64_t g = 0; g < panels; ++g) {
      const __mmask32 m = tail32(cols - g * NR);
      __m512 even[2], odd[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
      decode32<T>(_mm256_maskz_loadu_epi8(m, row0 + g * NR), even);
      if (has_odd) decode32<T>(_mm256_maskz_loadu_epi8(m, row0 + ldb + g * NR), odd);
      uint32_t* dst = out + (g * pairs + p) * NR;
      for (int h = 0; h < 2; ++h) {
        const __mmask16 mh = h == 0 ? lo16(m) : hi16(m);
        const __m512 z = _mm512_loadu_ps(zb + g * NR + 16 * h);
        const __m512i e = _mm512_castps_si512(_mm512_maskz_sub_ps(mh, even[h], z));
        const __mmask16 mo = has_odd ? mh : __mmask16(0);
        const __m512i o = _mm512_castps_si512(_mm512_maskz_sub_ps(mo, odd[h], z));
        // (o & 0xFFFF0000) | (e >> 16)
        const __m512i word = _mm512_ternarylogic_epi32(high_halves, o, _mm512_srli_epi32(e, 16), 0xEA);
        _mm512_store_si512(dst + 16 * h, word);
      }
    }
  }
}

using DecodeAFn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const float*, float*, int64_t,
                           const uint8_t*);
using DecodeBFn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const float*, float*);

template <template <ET> class Pick>
const auto& pick_decoder(ET t) {
  switch (t) {
    case ET::Uint8: return Pick<ET::Uint8>::fn;
    case ET::Int8: return Pick<ET::Int8>::fn;
    case ET::Float8E4M3FN: return Pick<ET::Float8E4M3FN>::fn;
    case ET::Float8E4M3FNUZ: return Pick<ET::Float8E4M3FNUZ>::fn;
    case ET::Float8E5M2: return Pick<ET::Float8E5M2>::fn;
    case ET::Float8E5M2FNUZ: return Pick<ET::Float8E5M2FNUZ>::fn;
    default: break;
  }
  throw Error("float8: unexpected operand type " + type_name(t));
}
template <ET T> struct PickA { static constexpr DecodeAFn fn = decode_a_chunk<T, float>; };
template <ET T> struct PickB { static constexpr DecodeBFn fn = decode_b_chunk<T>; };

using DecodeABf16Fn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const float*, uint16_t*, int64_t,
                               const uint8_t*);
using DecodeBBf16Fn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const float*, uint32_t*);
template <ET T> struct PickABf16 { static constexpr DecodeABf16Fn fn = decode_a_chunk<T, uint16_t>; };
template <ET T> struct PickBBf16 { static constexpr DecodeBBf16Fn fn = decode_b_chunk_bf16<T>; };

}  // namespace
}  // namespace qmatmul::gemm::detail

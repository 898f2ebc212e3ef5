// The 4 x 4 transpose of 128-bit lanes across four zmm registers, shared by
// the AVX-512 B packer (pack_avx512vnni.cpp: it puts unpacked column groups
// in panel order) and the raw-B small-M kernels (raw_b_small_m_avx512vnni.cpp:
// it puts each 64-column chunk of sums back in column order). Include only
// from sources compiled with AVX-512 F.
#pragma once

#include <immintrin.h>

namespace qmatmul::gemm {

// out[q] holds lane q of z[0], z[1], z[2], z[3], in that order.
inline void transpose_128bit_lanes(const __m512i (&z)[4], __m512i (&out)[4]) {
  const __m512i t0 = _mm512_shuffle_i64x2(z[0], z[1], 0x44);  // z0.0 z0.1 z1.0 z1.1
  const __m512i t1 = _mm512_shuffle_i64x2(z[2], z[3], 0x44);  // z2.0 z2.1 z3.0 z3.1
  const __m512i t2 = _mm512_shuffle_i64x2(z[0], z[1], 0xEE);  // z0.2 z0.3 z1.2 z1.3
  const __m512i t3 = _mm512_shuffle_i64x2(z[2], z[3], 0xEE);  // z2.2 z2.3 z3.2 z3.3
  out[0] = _mm512_shuffle_i64x2(t0, t1, 0x88);
  out[1] = _mm512_shuffle_i64x2(t0, t1, 0xDD);
  out[2] = _mm512_shuffle_i64x2(t2, t3, 0x88);
  out[3] = _mm512_shuffle_i64x2(t2, t3, 0xDD);
}

}  // namespace qmatmul::gemm

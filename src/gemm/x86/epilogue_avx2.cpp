// The tile epilogue in AVX2, for the AVX2 and AVX-VNNI kernels: the same
// arithmetic as the portable finish_tile (src/gemm/epilogue.cpp) and the
// AVX-512 one, eight columns at a time, bit for bit: zero-point terms in
// wrapping int32, the multiplier as two float32 roundings, v = double(C) *
// double(m) + double(zp) in float64, NaN -> 0, clamp, round half to even,
// narrow. What does not change along the rows comes prepared for the whole
// panel (PanelParams, when the driver prepared it; then a last group of
// fewer than eight columns is computed on eight lanes and cut) or is built
// once per tile (za * colsum, the multiplier), where columns past the last
// full group of eight use the scalar requantize() of epilogue.cpp.
// Compiled with AVX2 flags; nullptr without.
#include "gemm/epilogue.h"
#include "gemm/zero_point.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gemm/x86/epilogue_params.h"
#include "kernels/x86/requant_row_avx2.h"

namespace qmatmul::gemm {
namespace {

inline __m256i load8(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// C for 8 columns of a row in the regrouped form of zero_point.h
// (zero_point_row_term), with za_colsum = za * colsum for these columns.
inline __m256i corrected(const int32_t* acc, const int32_t* zb, int32_t row_term, __m256i za_colsum) {
  const __m256i c = _mm256_sub_epi32(load8(acc), _mm256_mullo_epi32(load8(zb), _mm256_set1_epi32(row_term)));
  return _mm256_sub_epi32(c, za_colsum);
}

inline __m128i requant4(__m128i c, __m128 m, __m128i zp, __m256d lo, __m256d hi) {
  __m256d v = _mm256_mul_pd(_mm256_cvtepi32_pd(c), _mm256_cvtps_pd(m));
  v = _mm256_add_pd(v, _mm256_cvtepi32_pd(zp));
  v = _mm256_and_pd(v, _mm256_cmp_pd(v, v, _CMP_ORD_Q));  // NaN -> 0
  v = _mm256_min_pd(_mm256_max_pd(v, lo), hi);
  v = _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm256_cvtpd_epi32(v);
}

// requant4 when the multiplier is finite: v cannot be NaN (|C| <= 2^31).
inline __m128i requant4_finite(__m128i c, __m128 m, __m128i zp, __m256d lo, __m256d hi) {
  __m256d v = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(c), _mm256_cvtps_pd(m)), _mm256_cvtepi32_pd(zp));
  v = _mm256_min_pd(_mm256_max_pd(v, lo), hi);
  return _mm256_cvtpd_epi32(_mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// A tile whose parameters the driver prepared for its panel (PanelParams):
// nothing to set up per tile. A last group of fewer than 8 columns is
// computed on all 8 lanes (those past the panel hold finite leftovers and
// parameters of 0) and only its columns are stored. Returns false when the
// tile does not qualify and the general path below must run.
bool finish_prepared_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                          const int32_t* row_sums, const PanelParams& panel) {
  const bool integer = p.output == OutputKind::Int32;
  if (!panel.row_invariant || (!integer && !panel.finite_multipliers)) return false;
  const int64_t ldy = p.N;
  const std::size_t first = static_cast<std::size_t>((t.batch * p.M + t.i0) * ldy + t.j0);
  const bool is_u8 = p.output == OutputKind::Uint8;
  const __m256d vlo = _mm256_set1_pd(is_u8 ? 0.0 : -128.0), vhi = _mm256_set1_pd(is_u8 ? 255.0 : 127.0);
  const bool exact_product = requant_product_exact(p.K);
  for (int i = 0; i < t.rows; ++i) {
    const __m256i rt = _mm256_set1_epi32(zero_point_row_term(row_sums[i], p.K, panel.za));
    for (int j = 0; j < t.cols; j += 8) {
      const __m256i raw = load8(acc + i * ld + j);
      const __m256i c =
          t.final_sums ? raw
                       : _mm256_add_epi32(
                             panel.zb_zero ? raw : _mm256_sub_epi32(raw, _mm256_mullo_epi32(load8(panel.zb + j), rt)),
                             load8(panel.column_term + j));
      const int valid = std::min(8, t.cols - j);
      if (integer) {
        int32_t* y = static_cast<int32_t*>(p.y) + first + i * ldy + j;
        if (valid == 8) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), c);
        } else {
          alignas(32) int32_t lanes[8];
          _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), c);
          std::memcpy(y, lanes, static_cast<std::size_t>(valid) * sizeof(int32_t));
        }
        continue;
      }
      const __m128i words = kernels::requant8_words(c, panel.m + j, panel.y_zero_point + j, vlo, vhi,
                                                    panel.bounded_multipliers, exact_product);
      const __m128i bytes = kernels::words_to_bytes(words, words, is_u8);
      unsigned char* y = static_cast<unsigned char*>(p.y) + first + i * ldy + j;
      if (valid == 8) {
        _mm_storel_epi64(reinterpret_cast<__m128i*>(y), bytes);
      } else {
        alignas(16) unsigned char lanes[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(lanes), bytes);
        std::memcpy(y, lanes, static_cast<std::size_t>(valid));
      }
    }
  }
  return true;
}

void finish_tile_avx2(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                      const int32_t* row_sums, const int32_t* col_sums, const PanelParams& panel) {
  if (finish_prepared_tile(p, t, acc, ld, row_sums, panel)) return;
  col_sums = column_sums_to_apply(t, col_sums);
  const int64_t ldy = p.N;
  const int full = t.cols / 8 * 8;
  int32_t zb_buf[kMaxCols];
  const int32_t* zb = row_values(p.b_zero_point, t.batch, 0, t.j0, t.cols, zb_buf);
  const std::size_t first = static_cast<std::size_t>((t.batch * p.M + t.i0) * ldy + t.j0);
  // za * colsum per 8 columns, once per tile when za does not vary by row.
  const bool za_per_tile = p.a_zero_point.row_stride == 0;
  __m256i za_colsum_tile[kMaxCols / 8];
  if (za_per_tile) {
    const __m256i za = _mm256_set1_epi32(*p.a_zero_point.at(t.batch, t.i0, 0));
    for (int j = 0; j < full; j += 8) za_colsum_tile[j / 8] = _mm256_mullo_epi32(load8(col_sums + j), za);
  }
  const auto za_colsum = [&](int32_t za, int j) {
    return za_per_tile ? za_colsum_tile[j / 8] : _mm256_mullo_epi32(load8(col_sums + j), _mm256_set1_epi32(za));
  };

  if (p.output == OutputKind::Int32) {
    for (int i = 0; i < t.rows; ++i) {
      const int32_t za = *p.a_zero_point.at(t.batch, t.i0 + i, 0);
      const int32_t rt = zero_point_row_term(row_sums[i], p.K, za);
      int32_t* y = static_cast<int32_t*>(p.y) + first + static_cast<std::size_t>(i * ldy);
      for (int j = 0; j < full; j += 8)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + j), corrected(acc + i * ld + j, zb + j, rt, za_colsum(za, j)));
      for (int j = full; j < t.cols; ++j)
        y[j] = apply_zero_points(acc[i * ld + j], row_sums[i], col_sums[j], za, zb[j], p.K);
    }
    return;
  }

  const bool is_u8 = p.output == OutputKind::Uint8;
  const int32_t lo = is_u8 ? 0 : -128, hi = is_u8 ? 255 : 127;
  const __m256d vlo = _mm256_set1_pd(lo), vhi = _mm256_set1_pd(hi);
  alignas(32) float bs_buf[kMaxCols], ys_buf[kMaxCols], m_buf[kMaxCols];
  alignas(32) int32_t yz_buf[kMaxCols];
  const float* bs = row_values(p.b_scale, t.batch, 0, t.j0, t.cols, bs_buf);
  const bool zp_per_tile = p.y_zero_point.row_stride == 0;
  const bool m_per_tile = p.a_scale.row_stride == 0 && p.y_scale.row_stride == 0;
  const int32_t* yz = zp_per_tile ? row_values(p.y_zero_point, t.batch, t.i0, t.j0, t.cols, yz_buf) : nullptr;
  const float* ys = nullptr;
  // m = f32(f32(a_scale * b_scale) / y_scale) for the row's full groups of 8.
  const auto multipliers = [&](int64_t row) {
    const __m256 as = _mm256_set1_ps(*p.a_scale.at(t.batch, row, 0));
    ys = row_values(p.y_scale, t.batch, row, t.j0, t.cols, ys_buf);
    for (int j = 0; j < full; j += 8)
      _mm256_store_ps(m_buf + j, _mm256_div_ps(_mm256_mul_ps(as, _mm256_loadu_ps(bs + j)), _mm256_loadu_ps(ys + j)));
  };
  if (m_per_tile) multipliers(t.i0);
  // Multiplier finite and the same for every row: C*m is finite, so no NaN step.
  bool finite = m_per_tile && p.requantization == Requantization::OnnxReference;
  for (int j = 0; finite && j < full; j += 8) {
    const __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_load_ps(m_buf + j));
    finite = _mm256_movemask_ps(_mm256_cmp_ps(magnitude, _mm256_set1_ps(INFINITY), _CMP_LT_OQ)) == 0xFF;
  }
  for (int i = 0; i < t.rows; ++i) {
    const int64_t row = t.i0 + i;
    const int32_t za = *p.a_zero_point.at(t.batch, row, 0);
    const int32_t rt = zero_point_row_term(row_sums[i], p.K, za);
    if (!m_per_tile) multipliers(row);
    if (!zp_per_tile) yz = row_values(p.y_zero_point, t.batch, row, t.j0, t.cols, yz_buf);
    unsigned char* y = static_cast<unsigned char*>(p.y) + first + static_cast<std::size_t>(i * ldy);
    for (int j = 0; j < full; j += 8) {
      const __m256i c = corrected(acc + i * ld + j, zb + j, rt, za_colsum(za, j));
      const __m256 m = _mm256_load_ps(m_buf + j);
      const __m256i zp = load8(yz + j);
      __m128i lo4, hi4;
      if (finite) {
        lo4 = requant4_finite(_mm256_castsi256_si128(c), _mm256_castps256_ps128(m), _mm256_castsi256_si128(zp), vlo, vhi);
        hi4 = requant4_finite(_mm256_extracti128_si256(c, 1), _mm256_extractf128_ps(m, 1),
                              _mm256_extracti128_si256(zp, 1), vlo, vhi);
      } else if (p.requantization == Requantization::OnnxReference) {
        lo4 = requant4(_mm256_castsi256_si128(c), _mm256_castps256_ps128(m), _mm256_castsi256_si128(zp), vlo, vhi);
        hi4 = requant4(_mm256_extracti128_si256(c, 1), _mm256_extractf128_ps(m, 1), _mm256_extracti128_si256(zp, 1),
                       vlo, vhi);
      } else {  // ONNX Runtime: rne(f32(f32(C) * m)) + zp, saturated
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), m);
        f = _mm256_and_ps(f, _mm256_cmp_ps(f, f, _CMP_ORD_Q));
        f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(-1024.0f)), _mm256_set1_ps(1024.0f));
        f = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        f = _mm256_add_ps(f, _mm256_cvtepi32_ps(zp));
        f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(static_cast<float>(lo))), _mm256_set1_ps(static_cast<float>(hi)));
        const __m256i r = _mm256_cvtps_epi32(f);
        lo4 = _mm256_castsi256_si128(r);
        hi4 = _mm256_extracti128_si256(r, 1);
      }
      const __m128i words = _mm_packs_epi32(lo4, hi4);  // values are already in range
      const __m128i bytes = is_u8 ? _mm_packus_epi16(words, words) : _mm_packs_epi16(words, words);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + j), bytes);
    }
    const float as = *p.a_scale.at(t.batch, row, 0);
    for (int j = full; j < t.cols; ++j) {
      const int32_t c = apply_zero_points(acc[i * ld + j], row_sums[i], col_sums[j], za, zb[j], p.K);
      const int32_t v = requantize(c, as, bs[j], ys[j], yz[j], lo, hi, p.requantization);
      y[j] = static_cast<unsigned char>(v);  // two's complement byte for int8
    }
  }
}

}  // namespace

TileEpilogueFn tile_epilogue_avx2() { return finish_tile_avx2; }

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
TileEpilogueFn tile_epilogue_avx2() { return nullptr; }
}  // namespace qmatmul::gemm

#endif

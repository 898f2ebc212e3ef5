// The tile epilogue in AVX-512: the same arithmetic as the portable
// finish_tile (src/gemm/epilogue.cpp), 16 columns at a time, bit for bit:
// zero-point terms in wrapping int32 (vpmulld wraps), the multiplier as two
// float32 roundings (vmulps, vdivps), v = double(C) * double(m) + double(zp)
// in float64, NaN -> 0, clamp, round half to even (vrndscalepd), narrow. The
// ONNX Runtime mode does its float32 product and rounding the same way. What
// does not change along the rows (zb', za' * colsum, the multiplier and y
// zero point widened to float64) comes prepared for the whole panel
// (PanelParams, when the driver prepared it) or is built once per tile; a
// whole 32-column tile then runs one shared row loop (finish_whole_tile),
// which reads final sums straight from the tile (Tile::final_sums), fuses
// C * m + zp into one FMA where that is exact (requant_product_exact) and
// narrows a row with two saturating packs.
// Compiled with AVX-512 flags; a stub (nullptr) without them.
#include "gemm/epilogue.h"
#include "gemm/zero_point.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
// GCC 12 reports its own _mm512_undefined_* helpers as "maybe uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "gemm/x86/epilogue_params.h"
#include "kernels/x86/requant_row_avx512.h"

namespace qmatmul::gemm {
namespace {

// Stores the first n (< 16) bytes of v without a masked narrowing store.
inline void store_bytes(unsigned char* dst, __m128i v, int n) {
  alignas(16) unsigned char tmp[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(tmp), v);
  for (int i = 0; i < n; ++i) dst[i] = tmp[i];
}

inline __mmask16 tail_mask(int n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

// C for 16 columns of a row in the regrouped form of zero_point.h
// (zero_point_row_term), with za_colsum = za * colsum for these columns.
inline __m512i corrected(const int32_t* acc, const int32_t* zb, int32_t row_term, __m512i za_colsum, __mmask16 m) {
  const __m512i raw = _mm512_maskz_loadu_epi32(m, acc);
  const __m512i vzb = _mm512_maskz_loadu_epi32(m, zb);
  const __m512i c = _mm512_sub_epi32(raw, _mm512_mullo_epi32(vzb, _mm512_set1_epi32(row_term)));
  return _mm512_sub_epi32(c, za_colsum);
}

inline __m512i za_times(int32_t za, const int32_t* col_sums, __mmask16 m) {
  return _mm512_mullo_epi32(_mm512_set1_epi32(za), _mm512_maskz_loadu_epi32(m, col_sums));
}

// Requantizes 8 lanes with the multiplier and y zero point already widened
// to float64, when the multiplier is finite: then C*m (|C| <= 2^31) is
// finite, v is never NaN, and clamping before one rounding to nearest even
// (the conversion's embedded rounding) equals the general path's steps.
inline __m256i requant8_finite(__m256i c, __m512d m, __m512d zp, __m512d lo, __m512d hi) {
  __m512d v = _mm512_add_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(c), m), zp);  // two roundings, never fused
  v = _mm512_min_pd(_mm512_max_pd(v, lo), hi);
  return _mm512_cvt_roundpd_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Requantizes 8 lanes in float64: returns int32 results.
inline __m256i requant8(__m256i c, __m256 m, __m256i zp, __m512d lo, __m512d hi) {
  __m512d v = _mm512_mul_pd(_mm512_cvtepi32_pd(c), _mm512_cvtps_pd(m));
  v = _mm512_add_pd(v, _mm512_cvtepi32_pd(zp));
  v = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
  v = _mm512_min_pd(_mm512_max_pd(v, lo), hi);
  v = _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_cvtpd_epi32(v);
}

// Stores 16 requantized int32 lanes as bytes (first n valid).
inline void store_narrowed(unsigned char* y, __m512i out, __mmask16 mask, int n) {
  // Narrow in a register, then store: a masked vpmovdb straight to memory is
  // microcoded and slow on AMD cores.
  const __m128i bytes = _mm512_cvtepi32_epi8(out);
  if (mask == 0xFFFF)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
  else
    store_bytes(y, bytes, n);
}

// What a whole 32-column tile's rows share when no parameter varies by row,
// as arrays of its 32 columns (a prepared panel's own, PanelParams, or built
// for the tile): zb', the column term (-za' * colsum, zero_point.h), and for
// requantization the multipliers and y zero points in float64.
struct WholeTileParams {
  const int32_t* zb;
  const int32_t* column_term;
  const double* m;
  const double* y_zero_point;
  int32_t za;
  bool zb_zero;  // zb' = 0 in every column (e.g. int8 weights with zero point 0): no row term
  bool bounded;  // every |m| <= 0.5: round to int32 first and saturate in integers
};

// The zero-point terms of a whole tile in registers, loaded once per tile.
struct ZeroPointVectors {
  __m512i zb[2], column_term[2];
};

inline ZeroPointVectors load_zero_point_vectors(const WholeTileParams& w) {
  ZeroPointVectors v;
  for (int h = 0; h < 2; ++h) {
    v.zb[h] = _mm512_loadu_si512(w.zb + 16 * h);
    v.column_term[h] = _mm512_loadu_si512(w.column_term + 16 * h);
  }
  return v;
}

// C of a whole tile's row i, 16 columns (half h of the row), with the
// zero-point terms of zero_point.h applied.
inline __m512i corrected_half(const GemmProblem& p, const int32_t* acc, int64_t ld, const int32_t* row_sums,
                              const WholeTileParams& w, const ZeroPointVectors& v, int i, int h) {
  __m512i c = _mm512_loadu_si512(acc + i * ld + 16 * h);
  if (!w.zb_zero)
    c = _mm512_sub_epi32(c, _mm512_mullo_epi32(v.zb[h], _mm512_set1_epi32(zero_point_row_term(row_sums[i], p.K, w.za))));
  return _mm512_add_epi32(c, v.column_term[h]);
}

// The same row as four groups of 8 columns: acc itself when the kernel
// already added the column term (Tile::final_sums).
template <bool kFinalSums>
inline void corrected_row(const GemmProblem& p, const int32_t* acc, int64_t ld, const int32_t* row_sums,
                          const WholeTileParams& w, const ZeroPointVectors& v, int i, __m256i (&c)[4]) {
  if (kFinalSums) {
    for (int q = 0; q < 4; ++q) c[q] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i * ld + 8 * q));
    return;
  }
  for (int h = 0; h < 2; ++h) {
    const __m512i half = corrected_half(p, acc, ld, row_sums, w, v, i, h);
    c[2 * h] = _mm512_castsi512_si256(half);
    c[2 * h + 1] = _mm512_extracti64x4_epi64(half, 1);
  }
}

// The requantized rows of a 32-column tile (requant_row_avx512.h). A tile
// of fewer columns (a last panel's) requantizes its rows' 32 lanes all the
// same, into a buffer, and copies its columns: the lanes past them hold
// finite leftovers and parameters of 0, and are dropped.
template <bool kFinalSums>
void requantize_whole_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                           const int32_t* row_sums, const WholeTileParams& w, unsigned char* y) {
  const kernels::RequantParams rq{w.m, w.y_zero_point, p.output == OutputKind::Uint8, w.bounded,
                                  requant_product_exact(p.K)};
  const kernels::RequantRowVectors rv = kernels::load_requant_row_vectors(rq);
  const ZeroPointVectors v = load_zero_point_vectors(w);
  kernels::with_requant_flags(rq, [&]<bool kExactProduct, bool kBounded>() {
    const auto requantize_row = [&](int i, unsigned char* dst) {
      __m256i c[4];
      corrected_row<kFinalSums>(p, acc, ld, row_sums, w, v, i, c);
      kernels::requantize_row32<kExactProduct, kBounded>(c, rv, dst);
    };
    unsigned char* row = y;
    if (t.cols == 32) {
      for (int i = 0; i < t.rows; ++i, row += p.N) requantize_row(i, row);
      return;
    }
    alignas(32) unsigned char bytes[32];
    for (int i = 0; i < t.rows; ++i, row += p.N) {
      requantize_row(i, bytes);
      std::memcpy(row, bytes, static_cast<std::size_t>(t.cols));
    }
  });
}

// The rows of a whole 32-column tile whose parameters do not vary by row
// (and, to requantize, whose multipliers are all finite).
void finish_whole_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                       const int32_t* row_sums, const WholeTileParams& w) {
  const std::size_t first = static_cast<std::size_t>((t.batch * p.M + t.i0) * p.N + t.j0);
  if (p.output == OutputKind::Int32) {
    const ZeroPointVectors v = load_zero_point_vectors(w);
    int32_t* y = static_cast<int32_t*>(p.y) + first;
    for (int i = 0; i < t.rows; ++i, y += p.N)
      for (int h = 0; h < 2; ++h)
        _mm512_storeu_si512(y + 16 * h, t.final_sums ? _mm512_loadu_si512(acc + i * ld + 16 * h)
                                                     : corrected_half(p, acc, ld, row_sums, w, v, i, h));
    return;
  }
  unsigned char* y = static_cast<unsigned char*>(p.y) + first;
  if (t.final_sums)
    requantize_whole_tile<true>(p, t, acc, ld, row_sums, w, y);
  else
    requantize_whole_tile<false>(p, t, acc, ld, row_sums, w, y);
}

// A tile of a panel the driver prepared (PanelParams): the row loop reads
// the panel's own arrays; whole tiles, and requantized tiles of fewer
// columns. Returns false when the general path below must run.
bool finish_prepared_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                          const int32_t* row_sums, const PanelParams& panel) {
  const bool integer = p.output == OutputKind::Int32;
  if ((integer && t.cols != 32) || !panel.row_invariant || (!integer && !panel.finite_multipliers)) return false;
  const WholeTileParams w{panel.zb, panel.column_term, panel.m, panel.y_zero_point, panel.za, panel.zb_zero,
                          !integer && panel.bounded_multipliers};
  finish_whole_tile(p, t, acc, ld, row_sums, w);
  return true;
}

// Every other tile: parameters that vary by row, partial tiles, panels the
// driver did not prepare, infinite multipliers, the ONNX Runtime rounding.
// Kept out of line: its parameter buffers make a large stack frame, which
// the prepared tiles above should not pay for.
__attribute__((noinline)) void finish_general_tile(const GemmProblem& p, const Tile& t, const int32_t* acc,
                                                   int64_t ld, const int32_t* row_sums, const int32_t* col_sums) {
  col_sums = column_sums_to_apply(t, col_sums);
  const int64_t ldy = p.N;
  int32_t zb_buf[kMaxCols];
  const int32_t* zb = row_values(p.b_zero_point, t.batch, 0, t.j0, t.cols, zb_buf);
  const std::size_t first = static_cast<std::size_t>((t.batch * p.M + t.i0) * ldy + t.j0);
  // za * colsum per 16 columns, once per tile when za does not vary by row.
  const bool za_per_tile = p.a_zero_point.row_stride == 0;
  __m512i za_colsum_tile[kMaxCols / 16];
  if (za_per_tile) {
    const int32_t za = *p.a_zero_point.at(t.batch, t.i0, 0);
    for (int j = 0; j < t.cols; j += 16) za_colsum_tile[j / 16] = za_times(za, col_sums + j, tail_mask(t.cols - j));
  }
  const auto za_colsum = [&](int32_t za, int j, __mmask16 m) {
    return za_per_tile ? za_colsum_tile[j / 16] : za_times(za, col_sums + j, m);
  };

  // A whole tile whose zero points do not vary by row: the shared row loop.
  const bool whole_tile = t.cols == 32 && za_per_tile;
  alignas(64) int32_t column_term[32];
  alignas(64) double m_whole[32], zp_whole[32];
  WholeTileParams whole{zb, column_term, m_whole, zp_whole, 0, false, false};
  if (whole_tile) {
    whole.za = *p.a_zero_point.at(t.batch, t.i0, 0);
    const __m512i zb_any = _mm512_or_si512(_mm512_loadu_si512(zb), _mm512_loadu_si512(zb + 16));
    whole.zb_zero = _mm512_test_epi32_mask(zb_any, zb_any) == 0;
    for (int h = 0; h < 2; ++h)
      _mm512_store_si512(column_term + 16 * h, _mm512_sub_epi32(_mm512_setzero_si512(), za_colsum_tile[h]));
  }

  if (p.output == OutputKind::Int32) {
    if (whole_tile) {
      finish_whole_tile(p, t, acc, ld, row_sums, whole);
      return;
    }
    for (int i = 0; i < t.rows; ++i) {
      const int32_t za = *p.a_zero_point.at(t.batch, t.i0 + i, 0);
      const int32_t rt = zero_point_row_term(row_sums[i], p.K, za);
      int32_t* y = static_cast<int32_t*>(p.y) + first + static_cast<std::size_t>(i * ldy);
      for (int j = 0; j < t.cols; j += 16) {
        const __mmask16 m = tail_mask(t.cols - j);
        const __m512i c = corrected(acc + i * ld + j, zb + j, rt, za_colsum(za, j, m), m);
        if (m == 0xFFFF)
          _mm512_storeu_si512(y + j, c);  // masked stores are slower on AMD cores
        else
          _mm512_mask_storeu_epi32(y + j, m, c);
      }
    }
    return;
  }

  const bool is_u8 = p.output == OutputKind::Uint8;
  const double lo = is_u8 ? 0.0 : -128.0, hi = is_u8 ? 255.0 : 127.0;
  const __m512d vlo = _mm512_set1_pd(lo), vhi = _mm512_set1_pd(hi);
  alignas(64) float bs_buf[kMaxCols], ys_buf[kMaxCols], m_buf[kMaxCols];  // m_buf: cols, rounded up to 16
  alignas(64) int32_t yz_buf[kMaxCols];
  const float* bs = row_values(p.b_scale, t.batch, 0, t.j0, t.cols, bs_buf);
  // The multiplier m = f32(f32(a_scale * b_scale) / y_scale) for one row's columns.
  const auto multipliers = [&](int64_t row, float* out) {
    const __m512 as = _mm512_set1_ps(*p.a_scale.at(t.batch, row, 0));
    const float* ys = row_values(p.y_scale, t.batch, row, t.j0, t.cols, ys_buf);
    for (int j = 0; j < t.cols; j += 16) {
      const __mmask16 mask = tail_mask(t.cols - j);
      const __m512 ab = _mm512_mul_ps(as, _mm512_maskz_loadu_ps(mask, bs + j));
      // Masked-off lanes divide by 1 so they raise nothing.
      _mm512_mask_storeu_ps(out + j, mask, _mm512_div_ps(ab, _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), mask, ys + j)));
    }
  };
  // Parameters that do not change along the rows are prepared once per tile.
  const bool m_per_tile = p.a_scale.row_stride == 0 && p.y_scale.row_stride == 0;
  const bool zp_per_tile = p.y_zero_point.row_stride == 0;
  if (m_per_tile) multipliers(t.i0, m_buf);
  const int32_t* yz = zp_per_tile ? row_values(p.y_zero_point, t.batch, t.i0, t.j0, t.cols, yz_buf) : nullptr;

  // The common case (multiplier and y zero point the same for every row of
  // the tile, all multipliers finite, the default rounding): both widened to
  // float64 once per tile, and the shorter requant8_finite.
  bool finite = m_per_tile && zp_per_tile && p.requantization == Requantization::OnnxReference;
  for (int j = 0; finite && j < t.cols; j += 16) {
    const __mmask16 mask = tail_mask(t.cols - j);
    const __m512 magnitude = _mm512_abs_ps(_mm512_maskz_loadu_ps(mask, m_buf + j));  // NaN compares false below
    finite = _mm512_mask_cmp_ps_mask(mask, magnitude, _mm512_set1_ps(INFINITY), _CMP_LT_OQ) == mask;
  }
  if (finite) {
    __m512d m_d[kMaxCols / 8], zp_d[kMaxCols / 8];
    for (int j = 0; j < t.cols; j += 16) {  // whole 16-column steps: lanes past cols are 0
      const int left = t.cols - j;
      const __mmask16 m16 = tail_mask(left);
      m_d[j / 8] = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(static_cast<__mmask8>(m16), m_buf + j));
      zp_d[j / 8] = _mm512_cvtepi32_pd(_mm256_maskz_loadu_epi32(static_cast<__mmask8>(m16), yz + j));
      m_d[j / 8 + 1] = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(static_cast<__mmask8>(m16 >> 8), m_buf + j + 8));
      zp_d[j / 8 + 1] = _mm512_cvtepi32_pd(_mm256_maskz_loadu_epi32(static_cast<__mmask8>(m16 >> 8), yz + j + 8));
    }
    if (whole_tile) {
      for (int q = 0; q < 4; ++q) {
        _mm512_store_pd(m_whole + 8 * q, m_d[q]);
        _mm512_store_pd(zp_whole + 8 * q, zp_d[q]);
      }
      finish_whole_tile(p, t, acc, ld, row_sums, whole);
      return;
    }
    for (int i = 0; i < t.rows; ++i) {
      const int32_t za = *p.a_zero_point.at(t.batch, t.i0 + i, 0);
      const int32_t rt = zero_point_row_term(row_sums[i], p.K, za);
      unsigned char* y = static_cast<unsigned char*>(p.y) + first + static_cast<std::size_t>(i * ldy);
      for (int j = 0; j < t.cols; j += 16) {
        const __mmask16 mask = tail_mask(t.cols - j);
        const __m512i c = corrected(acc + i * ld + j, zb + j, rt, za_colsum(za, j, mask), mask);
        const __m256i lo8 = requant8_finite(_mm512_castsi512_si256(c), m_d[j / 8], zp_d[j / 8], vlo, vhi);
        const __m256i hi8 = requant8_finite(_mm512_extracti64x4_epi64(c, 1), m_d[j / 8 + 1], zp_d[j / 8 + 1], vlo, vhi);
        store_narrowed(y + j, _mm512_inserti64x4(_mm512_castsi256_si512(lo8), hi8, 1), mask, t.cols - j);
      }
    }
    return;
  }

  for (int i = 0; i < t.rows; ++i) {
    const int64_t row = t.i0 + i;
    const int32_t za = *p.a_zero_point.at(t.batch, row, 0);
    const int32_t rt = zero_point_row_term(row_sums[i], p.K, za);
    if (!m_per_tile) multipliers(row, m_buf);
    if (!zp_per_tile) yz = row_values(p.y_zero_point, t.batch, row, t.j0, t.cols, yz_buf);
    unsigned char* y = static_cast<unsigned char*>(p.y) + first + static_cast<std::size_t>(i * ldy);
    for (int j = 0; j < t.cols; j += 16) {
      const __mmask16 mask = tail_mask(t.cols - j);
      const __m512i c = corrected(acc + i * ld + j, zb + j, rt, za_colsum(za, j, mask), mask);
      const __m512 m = _mm512_maskz_loadu_ps(mask, m_buf + j);
      const __m512i zp = _mm512_maskz_loadu_epi32(mask, yz + j);
      __m512i out;
      if (p.requantization == Requantization::OnnxReference) {
        const __m256i lo8 = requant8(_mm512_castsi512_si256(c), _mm512_castps512_ps256(m),
                                     _mm512_castsi512_si256(zp), vlo, vhi);
        const __m256i hi8 = requant8(_mm512_extracti64x4_epi64(c, 1),
                                     _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(m), 1)),
                                     _mm512_extracti64x4_epi64(zp, 1), vlo, vhi);
        out = _mm512_inserti64x4(_mm512_castsi256_si512(lo8), hi8, 1);
      } else {
        // ONNX Runtime: rne(f32(f32(C) * m)) + zp, saturated.
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), m);
        f = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(f, f, _CMP_ORD_Q), f);
        f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-1024.0f)), _mm512_set1_ps(1024.0f));
        f = _mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        f = _mm512_add_ps(f, _mm512_cvtepi32_ps(zp));
        f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(static_cast<float>(lo))), _mm512_set1_ps(static_cast<float>(hi)));
        out = _mm512_cvtps_epi32(f);
      }
      store_narrowed(y + j, out, mask, t.cols - j);
    }
  }
}

// MatMulInteger sums the kernel already finished (Tile::final_sums): the
// tile's rows copied to the output, any number of columns.
void copy_final_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld) {
  int32_t* y = static_cast<int32_t*>(p.y) + (t.batch * p.M + t.i0) * p.N + t.j0;
  for (int i = 0; i < t.rows; ++i, y += p.N, acc += ld)
    for (int j = 0; j < t.cols; j += 16) {
      const __mmask16 m = tail_mask(t.cols - j);
      if (m == 0xFFFF)
        _mm512_storeu_si512(y + j, _mm512_loadu_si512(acc + j));  // masked stores are slower on AMD cores
      else
        _mm512_mask_storeu_epi32(y + j, m, _mm512_maskz_loadu_epi32(m, acc + j));
    }
}

void finish_tile_avx512(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                        const int32_t* row_sums, const int32_t* col_sums, const PanelParams& panel) {
  if (t.final_sums && p.output == OutputKind::Int32)
    copy_final_tile(p, t, acc, ld);
  else if (!finish_prepared_tile(p, t, acc, ld, row_sums, panel))
    finish_general_tile(p, t, acc, ld, row_sums, col_sums);
}

}  // namespace

TileEpilogueFn tile_epilogue_avx512() { return finish_tile_avx512; }

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
TileEpilogueFn tile_epilogue_avx512() { return nullptr; }
}  // namespace qmatmul::gemm

#endif

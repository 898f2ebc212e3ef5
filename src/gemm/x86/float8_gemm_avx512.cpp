// The float8 GEMM in AVX-512 (F/BW/DQ/VL), bit-identical to the portable
// path of src/gemm/float8_gemm.cpp: every output element is one float32 FMA
// chain over k ascending from +0 (here one vector lane per output column,
// _mm512_fmadd_ps), and the epilogue does the portable epilogue's float32
// multiplier, float64 product and sum, and one rounding, eight lanes at a time.
//
// Blocking. A task is (batch, block of MC rows, range of NB-column blocks).
// The task decodes its A rows once to float32 minus the row zero point
// (row-major, read by broadcast). For each column block and each KC-deep
// chunk of k it decodes the B chunk (minus the column zero points) into an
// L1-sized buffer of 32-column panels, then runs 8x32 register tiles over it,
// carrying the accumulators in a per-thread [MC][NB] buffer from chunk to
// chunk (that only stores and reloads the float32 chain state, so the order
// of the FMAs is unchanged). After the last chunk the block is requantized.
// Decoding is arithmetic: float8 exponent and mantissa placed into float32
// bits and rebiased, subnormals converted as integers and scaled, then the
// NaN/Inf codes patched; it yields the same bits as numeric::float8_table.
// Compiled with AVX-512 flags; stubs that throw without them.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "gemm/float8_gemm.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
// GCC 12 reports its own _mm512_undefined_* helpers as "maybe uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <type_traits>

#include "numeric/float8.h"

namespace qmatmul::gemm {
namespace detail {
namespace {

using ET = ElementType;

constexpr int MR = 8;     // rows per register tile
constexpr int NR = 32;    // columns per register tile (two zmm)
int64_t env_or(const char* name, int64_t d) { const char* v = std::getenv(name); return v ? std::atoll(v) : d; }
const int64_t NB = env_or("F8NB", 256);   // columns per block (NR multiple)
const int64_t KC = env_or("F8KC", 128);  // k per chunk (multiple of 16)
const int64_t MC = env_or("F8MC", 128);  // rows per block (MR multiple)

inline __mmask16 tail16(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1u); }

// ---- decoding: 16 codes -> 16 float32 values, same bits as the tables ----

template <ET T>
inline __m512 decode16(__m128i bytes) {
  if constexpr (T == ET::Uint8) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
  } else if constexpr (T == ET::Int8) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
  } else {
    constexpr bool e4 = T == ET::Float8E4M3FN || T == ET::Float8E4M3FNUZ;
    constexpr int mbits = e4 ? 3 : 2;
    constexpr int bias = T == ET::Float8E4M3FN ? 7 : T == ET::Float8E4M3FNUZ ? 8 : T == ET::Float8E5M2 ? 15 : 16;
    constexpr bool fnuz = T == ET::Float8E4M3FNUZ || T == ET::Float8E5M2FNUZ;
    constexpr float sub_scale = std::bit_cast<float>(static_cast<uint32_t>(127 + 1 - bias - mbits) << 23);
    const __m512 qnan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000));
    const __m512i c = _mm512_cvtepu8_epi32(bytes);
    const __m512i mag = _mm512_and_si512(c, _mm512_set1_epi32(0x7F));
    // Normal codes: exponent and mantissa moved into float32 position, exponent rebiased.
    const __m512i normal =
        _mm512_add_epi32(_mm512_slli_epi32(mag, 23 - mbits), _mm512_set1_epi32((127 - bias) << 23));
    // Subnormal codes (exponent field 0): the mantissa as an integer times 2^(1-bias-mbits).
    const __mmask16 sub = _mm512_testn_epi32_mask(mag, _mm512_set1_epi32(0x7F & ~((1 << mbits) - 1)));
    const __m512 sub_value = _mm512_mul_ps(_mm512_cvtepi32_ps(mag), _mm512_set1_ps(sub_scale));
    __m512 v = _mm512_mask_blend_ps(sub, _mm512_castsi512_ps(normal), sub_value);
    if constexpr (T == ET::Float8E4M3FN) {
      v = _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7F)), qnan);
    } else if constexpr (T == ET::Float8E5M2) {
      v = _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7C)),
                             _mm512_castsi512_ps(_mm512_set1_epi32(0x7F800000)));
      v = _mm512_mask_mov_ps(v, _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7C)), qnan);
    }
    // Sign: v | ((c << 24) & 0x80000000).
    v = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(v), _mm512_slli_epi32(c, 24),
                                                      _mm512_set1_epi32(static_cast<int>(0x80000000u)), 0xF8));
    if constexpr (fnuz) v = _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(0x80)), qnan);
    return v;
  }
}

// Columns [k0, k0+kc) of `rows` rows of A (`a` points at row 0, column k0;
// row stride K bytes) as a_f = f32(a) - za[r], row-major with stride lda
// (a multiple of 16 >= kc; the padding holds junk never read).
template <ET T>
void decode_a_chunk(const uint8_t* a, int64_t K, int64_t rows, int64_t kc, const float* za, float* out,
                    int64_t lda) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = a + r * K;
    const __m512 z = _mm512_set1_ps(za[r]);
    for (int64_t k = 0; k < kc; k += 16) {
      const __m128i bytes = _mm_maskz_loadu_epi8(tail16(kc - k), src + k);
      _mm512_storeu_ps(out + r * lda + k, _mm512_sub_ps(decode16<T>(bytes), z));
    }
  }
}

// B rows [k0, k0+kc) and columns [j0, j0+cols) as b_f = f32(b) - zb[j], into
// panels of NR columns: out[panel][kk][NR]. Columns past `cols` up to the
// panel edge are 0 (zb is zero-padded there too).
template <ET T>
void decode_b_chunk(const uint8_t* b, int64_t ldb, int64_t kc, int64_t cols, const float* zb, float* out) {
  const int64_t groups = (cols + NR - 1) / NR * 2;
  for (int64_t kk = 0; kk < kc; ++kk) {
    const uint8_t* row = b + kk * ldb;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t left = cols - g * 16;
      const __m128i bytes = _mm_maskz_loadu_epi8(left > 0 ? tail16(left) : __mmask16(0), row + g * 16);
      const __m512 v = _mm512_sub_ps(decode16<T>(bytes), _mm512_loadu_ps(zb + g * 16));
      _mm512_store_ps(out + (g / 2) * kc * NR + kk * NR + (g % 2) * 16, v);
    }
  }
}

using DecodeAFn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const float*, float*, int64_t);
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
template <ET T> struct PickA { static constexpr DecodeAFn fn = decode_a_chunk<T>; };
template <ET T> struct PickB { static constexpr DecodeBFn fn = decode_b_chunk<T>; };

// ---- the register tile: R rows x 32 columns, k ascending ----

template <int R>
void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, bool first) {
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc[r][0] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
    acc[r][1] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b + k * NR);
    const __m512 b1 = _mm512_load_ps(b + k * NR + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
  }
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, bool);
constexpr TileFn kTiles[MR + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, tile<7>, tile<8>};

// ---- the few-rows kernel: R <= 4 rows x 64 columns, B decoded in registers ----
// For M <= kSmallM a decoded B would be used by too few rows to pay for its
// buffer; this reads kc rows of B directly (64 contiguous bytes each, so a
// task streams whole B rows), decodes them and feeds R FMA chains per lane.

constexpr int kSmallM = 4;

template <ET T, int R>
void strip(int64_t kc, const uint8_t* b, int64_t ldb, const float* a, int64_t lda, const float* zb, float* c,
           int64_t ldc, bool first, __mmask64 cols) {
  __m512 acc[R][4];
  __m512 z[4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    z[q] = _mm512_loadu_ps(zb + 16 * q);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][q] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16 * q);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const __m512i bytes = _mm512_maskz_loadu_epi8(cols, b + k * ldb);
    __m512 v[4];
    v[0] = _mm512_sub_ps(decode16<T>(_mm512_castsi512_si128(bytes)), z[0]);
    v[1] = _mm512_sub_ps(decode16<T>(_mm512_extracti32x4_epi32(bytes, 1)), z[1]);
    v[2] = _mm512_sub_ps(decode16<T>(_mm512_extracti32x4_epi32(bytes, 2)), z[2]);
    v[3] = _mm512_sub_ps(decode16<T>(_mm512_extracti32x4_epi32(bytes, 3)), z[3]);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) acc[r][q] = _mm512_fmadd_ps(av, v[q], acc[r][q]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) _mm512_storeu_ps(c + r * ldc + 16 * q, acc[r][q]);
}

using StripFn = void (*)(int64_t, const uint8_t*, int64_t, const float*, int64_t, const float*, float*, int64_t, bool,
                         __mmask64);
template <ET T> struct PickStrip {
  static constexpr StripFn fn[kSmallM + 1] = {nullptr, strip<T, 1>, strip<T, 2>, strip<T, 3>, strip<T, 4>};
};

// ---- the epilogue: requantize and encode, 16 columns at a time ----

// Vectorized numeric::float8_encode for 8 doubles: the same steps (exponent,
// clamp to the smallest normal exponent, power-of-two scaling, one RNE), as int32 codes.
struct Encoder {
  __m512d max_value, min_exponent, mantissa_bits, binade;  // binade = 2^mbits
  __m256i max_code, nan_code;
  bool fnuz;
  explicit Encoder(const numeric::Float8Format& f)
      : max_value(_mm512_set1_pd(f.max_value)),
        min_exponent(_mm512_set1_pd(f.min_exponent)),
        mantissa_bits(_mm512_set1_pd(f.mantissa_bits)),
        binade(_mm512_set1_pd(1 << f.mantissa_bits)),
        max_code(_mm256_set1_epi32(f.max_code)),
        nan_code(_mm256_set1_epi32(f.nan_code)),
        fnuz(f.fnuz) {}

  __m256i operator()(__m512d v) const {
    const __m512i bits = _mm512_castpd_si512(v);
    const __mmask8 negative = _mm512_movepi64_mask(bits);
    const __mmask8 nan = _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
    const __m512d a = _mm512_castsi512_pd(_mm512_and_si512(bits, _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll)));
    const __mmask8 saturate = _mm512_cmp_pd_mask(a, max_value, _CMP_GE_OQ);
    const __m512d e = _mm512_max_pd(_mm512_getexp_pd(a), min_exponent);  // getexp(0) = -Inf
    const __m512d scaled = _mm512_scalef_pd(a, _mm512_sub_pd(mantissa_bits, e));
    const __m512d n = _mm512_roundscale_pd(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512d code_value = _mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(e, min_exponent), binade), n);
    __m256i code = _mm512_cvtpd_epi32(code_value);
    code = _mm256_mask_mov_epi32(code, saturate, max_code);
    __mmask8 set_sign = negative;
    if (fnuz) set_sign &= _mm256_test_epi32_mask(code, code);  // no negative zero
    code = _mm256_mask_or_epi32(code, set_sign, code, _mm256_set1_epi32(0x80));
    return _mm256_mask_mov_epi32(code, nan, nan_code);
  }
};

// Integer output: NaN -> 0, clamp, round half to even.
inline __m256i to_integer(__m512d v, __m512d lo, __m512d hi) {
  v = _mm512_mask_mov_pd(v, _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), _mm512_setzero_pd());
  v = _mm512_min_pd(_mm512_max_pd(v, lo), hi);
  return _mm512_cvtpd_epi32(_mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// 16 values of a parameter row segment starting at column j (lanes past the
// mask are unspecified).
inline __m512 param16(const ParamSpan<float>& s, int64_t batch, int64_t i, int64_t j, __mmask16 m) {
  const float* first = s.at(batch, i, j);
  if (s.col_stride == 0) return _mm512_set1_ps(*first);
  if (s.col_stride == 1) return _mm512_maskz_loadu_ps(m, first);
  alignas(64) float tmp[16] = {};
  for (int l = 0; l < 16; ++l)
    if ((m >> l) & 1) tmp[l] = first[l * s.col_stride];
  return _mm512_load_ps(tmp);
}

struct Epilogue {
  const Float8Problem& p;
  bool float8_out;
  Encoder encode;
  __m512d lo, hi;

  explicit Epilogue(const Float8Problem& prob)
      : p(prob),
        float8_out(is_float8(prob.y_type)),
        encode(numeric::float8_format(float8_out ? prob.y_type : ET::Float8E4M3FN)),
        lo(_mm512_set1_pd(prob.y_type == ET::Uint8 ? 0.0 : -128.0)),
        hi(_mm512_set1_pd(prob.y_type == ET::Uint8 ? 255.0 : 127.0)) {}

  __m256i finish(__m512d c, __m512d m, __m512d zp) const {
    const __m512d v = _mm512_add_pd(_mm512_mul_pd(c, m), zp);  // two float64 roundings, never fused
    return float8_out ? encode(v) : to_integer(v, lo, hi);
  }

  // Columns [j0, j0+cols) of row (batch, i) from accumulators c (float or int32).
  template <typename Acc>
  void row(int64_t batch, int64_t i, int64_t j0, int64_t cols, const Acc* c) const {
    const __m512 as = _mm512_set1_ps(*p.a_scale.at(batch, i, 0));
    uint8_t* y = static_cast<uint8_t*>(p.y) + (batch * p.M + i) * p.N + j0;
    for (int64_t j = 0; j < cols; j += 16) {
      const __mmask16 m = tail16(cols - j);
      const __m512 ab = _mm512_mul_ps(as, param16(p.b_scale, batch, i, j0 + j, m));
      const __m512 mult = _mm512_div_ps(ab, param16(p.y_scale, batch, i, j0 + j, m));
      const __m512 zp = param16(p.y_zero_point, batch, i, j0 + j, m);
      __m512d c_lo, c_hi;
      if constexpr (std::is_same_v<Acc, float>) {
        const __m512 cf = _mm512_maskz_loadu_ps(m, c + j);
        c_lo = _mm512_cvtps_pd(_mm512_castps512_ps256(cf));
        c_hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(cf), 1)));
      } else {  // int32
        const __m512i ci = _mm512_maskz_loadu_epi32(m, c + j);
        c_lo = _mm512_cvtepi32_pd(_mm512_castsi512_si256(ci));
        c_hi = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(ci, 1));
      }
      const __m256i lo8 = finish(c_lo, _mm512_cvtps_pd(_mm512_castps512_ps256(mult)),
                                 _mm512_cvtps_pd(_mm512_castps512_ps256(zp)));
      const __m256i hi8 = finish(c_hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mult), 1))),
                                 _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(zp), 1))));
      const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_inserti64x4(_mm512_castsi256_si512(lo8), hi8, 1));
      _mm_mask_storeu_epi8(y + j, m, bytes);
    }
  }
};

// ---- the drivers ----

// Splits `units` (row blocks) x `cols` columns into tasks of whole `step`
// column groups, enough for every thread to get some.
struct Split {
  int64_t per_task, per_row, tasks;
  Split(int64_t units, int64_t groups, int threads) {
    const int64_t want = 4 * static_cast<int64_t>(threads);
    const int64_t n = units >= want ? 1 : std::min(groups, (want + units - 1) / units);
    per_task = (groups + n - 1) / n;
    per_row = (groups + per_task - 1) / per_task;
    tasks = units * per_row;
  }
};

// M <= kSmallM: a task is (batch, range of 64-column strips); its A rows are
// decoded whole, B streams through strip() KS rows at a time.
void gemm_small_m(const Float8Problem& p) {
  constexpr int64_t KS = 16;
  const DecodeAFn decode_a = pick_decoder<PickA>(p.a_type);
  const StripFn strip_fn = pick_decoder<PickStrip>(p.b_type)[p.M];
  const Epilogue epilogue(p);
  const int64_t strips = (p.N + 63) / 64;
  const Split split(p.batches, strips, p.threads);
  const int64_t width = split.per_task * 64;
  const int64_t lda = (std::max<int64_t>(p.K, 1) + 15) / 16 * 16;

#pragma omp parallel num_threads(p.threads) if (p.threads > 1 && split.tasks > 1)
  {
    std::vector<float> a_buf(static_cast<std::size_t>(p.M * lda)), za(static_cast<std::size_t>(p.M));
    std::vector<float> acc(static_cast<std::size_t>(p.M * width)), zb(static_cast<std::size_t>(width));
    int64_t decoded_for = -1;
#pragma omp for schedule(static)
    for (int64_t task = 0; task < split.tasks; ++task) {
      const int64_t batch = task / split.per_row;
      const int64_t j0 = (task % split.per_row) * width, cols = std::min(width, p.N - j0);
      if (decoded_for != batch) {
        for (int64_t r = 0; r < p.M; ++r) za[static_cast<std::size_t>(r)] = *p.a_zero_point.at(batch, r, 0);
        decode_a(static_cast<const uint8_t*>(p.a) + p.a_index[batch] * p.M * p.K, p.K, p.M, p.K, za.data(),
                 a_buf.data(), lda);
        decoded_for = batch;
      }
      for (int64_t j = 0; j < width; ++j)
        zb[static_cast<std::size_t>(j)] = j < cols ? *p.b_zero_point.at(batch, 0, j0 + j) : 0.0f;
      if (p.K == 0) std::fill(acc.begin(), acc.end(), 0.0f);
      const auto* b = static_cast<const uint8_t*>(p.b) + p.b_index[batch] * p.K * p.N + j0;
      for (int64_t k0 = 0; k0 < p.K; k0 += KS) {
        const int64_t kc = std::min(KS, p.K - k0);
        for (int64_t s = 0; s < cols; s += 64) {
          const int64_t left = cols - s;
          const __mmask64 mask = left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
          strip_fn(kc, b + k0 * p.N + s, p.N, a_buf.data() + k0, lda, zb.data() + s, acc.data() + s, width,
                   k0 == 0, mask);
        }
      }
      for (int64_t r = 0; r < p.M; ++r) epilogue.row(batch, r, j0, cols, acc.data() + r * width);
    }
  }
}

// A task is (batch, block of up to MC rows, range of NB-column blocks). Per
// column block and KC-deep chunk: decode the A chunk [rows][KC] and the B
// chunk [KC][NB] (as NR-column panels), run the tiles, carry the
// accumulators in [rows][NB]; requantize the block after its last chunk.
void gemm_blocked(const Float8Problem& p) {
  const DecodeAFn decode_a = pick_decoder<PickA>(p.a_type);
  const DecodeBFn decode_b = pick_decoder<PickB>(p.b_type);
  const Epilogue epilogue(p);
  const int64_t m_blocks = (p.M + MC - 1) / MC;
  const int64_t mc = ((p.M + m_blocks - 1) / m_blocks + MR - 1) / MR * MR;  // balanced, whole tiles
  const int64_t col_blocks = (p.N + NB - 1) / NB;
  const Split split(p.batches * m_blocks, col_blocks, p.threads);

#pragma omp parallel num_threads(p.threads) if (p.threads > 1 && split.tasks > 1)
  {
    std::vector<float> a_buf(static_cast<std::size_t>(mc * KC)), za(static_cast<std::size_t>(mc));
    std::vector<float> acc(static_cast<std::size_t>(mc * NB)), zb(static_cast<std::size_t>(NB));
    std::vector<float> b_storage(static_cast<std::size_t>(NB * KC + 16));
    float* b_buf = b_storage.data() + (16 - (reinterpret_cast<uintptr_t>(b_storage.data()) / 4) % 16) % 16;

#pragma omp for schedule(static)
    for (int64_t task = 0; task < split.tasks; ++task) {
      const int64_t row_task = task / split.per_row, part = task % split.per_row;
      const int64_t batch = row_task / m_blocks, i0 = (row_task % m_blocks) * mc;
      const int64_t rows = std::min(mc, p.M - i0);
      if (rows <= 0) continue;
      for (int64_t r = 0; r < rows; ++r) za[static_cast<std::size_t>(r)] = *p.a_zero_point.at(batch, i0 + r, 0);
      const auto* a = static_cast<const uint8_t*>(p.a) + (p.a_index[batch] * p.M + i0) * p.K;
      const auto* b = static_cast<const uint8_t*>(p.b) + p.b_index[batch] * p.K * p.N;
      const int64_t block_end = std::min(col_blocks, (part + 1) * split.per_task);
      for (int64_t block = part * split.per_task; block < block_end; ++block) {
        const int64_t j0 = block * NB, cols = std::min<int64_t>(NB, p.N - j0);
        const int64_t panels = (cols + NR - 1) / NR;
        for (int64_t j = 0; j < NB; ++j)
          zb[static_cast<std::size_t>(j)] = j < cols ? *p.b_zero_point.at(batch, 0, j0 + j) : 0.0f;
        if (p.K == 0) std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t k0 = 0; k0 < p.K; k0 += KC) {
          const int64_t kc = std::min(KC, p.K - k0);
          decode_a(a + k0, p.K, rows, kc, za.data(), a_buf.data(), KC);
          decode_b(b + k0 * p.N + j0, p.N, kc, cols, zb.data(), b_buf);
          for (int64_t panel = 0; panel < panels; ++panel) {
            const float* bp = b_buf + panel * kc * NR;
            for (int64_t r = 0; r < rows; r += MR) {
              const int rr = static_cast<int>(std::min<int64_t>(MR, rows - r));
              kTiles[rr](kc, a_buf.data() + r * KC, KC, bp, acc.data() + r * NB + panel * NR, NB, k0 == 0);
            }
          }
        }
        for (int64_t r = 0; r < rows; ++r) epilogue.row(batch, i0 + r, j0, cols, acc.data() + r * NB);
      }
    }
  }
}

}  // namespace

bool float8_avx512_compiled() { return true; }

void float8_gemm_avx512(const Float8Problem& p) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  if (p.M <= kSmallM)
    gemm_small_m(p);
  else
    gemm_blocked(p);
}

void float8_requantize_avx512(const Float8Problem& p, const int32_t* c) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const Epilogue epilogue(p);
  const int64_t rows = p.batches * p.M;
#pragma omp parallel for num_threads(p.threads) schedule(static) if (p.threads > 1 && rows > 1)
  for (int64_t row = 0; row < rows; ++row) epilogue.row(row / p.M, row % p.M, 0, p.N, c + row * p.N);
}

void float8_encode_doubles_avx512(const double* v, int64_t n, ElementType type, uint8_t* out) {
  const Encoder encode(numeric::float8_format(type));
  for (int64_t i = 0; i < n; i += 8) {
    const __mmask8 m = n - i >= 8 ? __mmask8(0xFF) : __mmask8((1u << (n - i)) - 1u);
    const __m256i codes = encode(_mm512_maskz_loadu_pd(m, v + i));
    _mm_mask_storeu_epi8(out + i, m, _mm256_cvtepi32_epi8(codes));
  }
}

}  // namespace detail
}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm::detail {

[[noreturn]] static void absent() { throw Error("float8: this build has no AVX-512 path"); }
bool float8_avx512_compiled() { return false; }
void float8_gemm_avx512(const Float8Problem&) { absent(); }
void float8_requantize_avx512(const Float8Problem&, const int32_t*) { absent(); }
void float8_encode_doubles_avx512(const double*, int64_t, ElementType, uint8_t*) { absent(); }

}  // namespace qmatmul::gemm::detail

#endif

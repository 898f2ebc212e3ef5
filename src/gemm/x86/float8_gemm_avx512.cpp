// The float8 GEMM in AVX-512 (F/BW/DQ/VL), bit-identical to the portable
// path of src/gemm/float8_gemm.cpp: every output element is the float32 FMA
// chain of float8_gemm.h from +0 (here one vector lane per output column),
// and the epilogue does the portable epilogue's float32 multiplier, float64
// product and sum, and one rounding, eight lanes at a time.
//
// Two drivers. Blocked (M > kStreamM): a task is (batch, block of up to MC
// rows, range of NB-column blocks); per column block and chunk of k it
// decodes the A chunk (minus the row zero points) and the B chunk (minus the
// column zero points, as 32-column panels) into cache-sized buffers and runs
// 8x32 register tiles, carrying the accumulators in a per-thread [MC][NB]
// buffer from chunk to chunk (storing and reloading the float32 chain state
// does not change the order of the FMAs). Its tiles are float32 FMAs, or,
// when every operand value is exact in bfloat16, vdpbf16ps on bfloat16 pairs
// (float8_gemm_avx512bf16.cpp), twice the products per instruction.
// Streaming (small M): B is read nearly sequentially, decoded in registers
// and consumed at once by up to 8 rows, with no B buffer. Both requantize a
// block after its last chunk. Decoding: float8_decode_avx512.h.
// Compiled with AVX-512 flags; stubs that throw without them.
#include <cstdint>
#include <vector>

#include "gemm/float8_gemm.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
// GCC 12 reports its own _mm512_undefined_* helpers as "maybe uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <type_traits>

#include "gemm/parallel_region.h"
#include "gemm/x86/float8_bf16_tile.h"
#include "gemm/x86/float8_decode_avx512.h"
#include "numeric/float8.h"

namespace qmatmul::gemm {
namespace detail {
namespace {

using ET = ElementType;

constexpr int MR = 8;     // rows per register tile
constexpr int64_t NB = 256;  // columns per block (NR multiple)
constexpr int64_t KC = 128;  // k per chunk (multiple of 32)
constexpr int64_t MC = 256;  // rows per block (MR multiple)
constexpr int64_t KS = 8;             // B rows per chunk in the streaming path
constexpr int64_t kStreamM = 8;       // largest M for the streaming path


// ---- the float32 register tile: R rows x 32 columns, k pairs ascending ----

template <int R>
void tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, bool first) {
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc[r][0] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
    acc[r][1] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
  }
  const auto step = [&](int64_t k) __attribute__((always_inline)) {
    const __m512 b0 = _mm512_load_ps(b + k * NR);
    const __m512 b1 = _mm512_load_ps(b + k * NR + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  };
  for_each_k_in_chain_order(kc, step);  // chunks start at even k (KC, KS even)
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
  }
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, bool);
constexpr TileFn kTiles[MR + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>, tile<7>, tile<8>};

// ---- the streaming kernel: R rows x 16Q columns, B decoded in registers ----
// For small M a decoded B would be used by too few rows to pay for a buffer:
// strip() reads kc rows of B directly (16Q contiguous bytes each; a task's
// strips cover whole B rows), decodes them and feeds R FMA chains per lane.
// Q = 4 for up to 4 rows, Q = 2 for 5 to 8 rows (at most 16 accumulators).

constexpr int kStripRows = 8;

template <ET T, int R, int Q>
void strip(int64_t kc, const uint8_t* b, int64_t ldb, const float* a, int64_t lda, const float* zb, float* c,
           int64_t ldc, bool first, __mmask64 cols) {
  __m512 acc[R][Q];
  __m512 z[Q];
#pragma GCC unroll 4
  for (int q = 0; q < Q; ++q) {
    z[q] = _mm512_loadu_ps(zb + 16 * q);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][q] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16 * q);
  }
  const auto step = [&](int64_t k) __attribute__((always_inline)) {
    _mm_prefetch(reinterpret_cast<const char*>(b + (k + kc) * ldb), _MM_HINT_T0);  // the next chunk
    __m512 v[Q];
    if constexpr (Q == 4) {
      const __m512i bytes = _mm512_maskz_loadu_epi8(cols, b + k * ldb);
      decode32<T>(_mm512_castsi512_si256(bytes), v);
      decode32<T>(_mm512_extracti64x4_epi64(bytes, 1), v + 2);
    } else {
      decode32<T>(_mm256_maskz_loadu_epi8(static_cast<__mmask32>(cols), b + k * ldb), v);
    }
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q) v[q] = _mm512_sub_ps(v[q], z[q]);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) acc[r][q] = _mm512_fmadd_ps(av, v[q], acc[r][q]);
    }
  };
  for_each_k_in_chain_order(kc, step);  // chunks start at even k (KC, KS even)
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q) _mm512_storeu_ps(c + r * ldc + 16 * q, acc[r][q]);
}

using StripFn = void (*)(int64_t, const uint8_t*, int64_t, const float*, int64_t, const float*, float*, int64_t, bool,
                         __mmask64);
template <ET T> struct PickStrip {
  static constexpr StripFn fn[kStripRows + 1] = {nullptr,          strip<T, 1, 4>, strip<T, 2, 4>,
                                                 strip<T, 3, 4>,   strip<T, 4, 4>, strip<T, 5, 2>,
                                                 strip<T, 6, 2>,   strip<T, 7, 2>, strip<T, 8, 2>};
};
inline int strip_columns(int rows) { return rows <= 4 ? 64 : 32; }

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
      __m128i bytes = _mm512_cvtepi32_epi8(_mm512_inserti64x4(_mm512_castsi256_si512(lo8), hi8, 1));
      // Keep vpmovdb in its register form: fused with the masked store it
      // becomes the memory form, which is microcoded and slow on Zen 4.
      __asm__("" : "+v"(bytes));
      _mm_mask_storeu_epi8(y + j, m, bytes);
    }
  }
};

// ---- the drivers ----

// Splits `units` (row blocks) x `groups` (column groups) into tasks of whole
// column groups: at least `want` tasks when the columns allow it, and at
// most `max_groups` groups per task.
struct Split {
  int64_t per_task, per_row, tasks;
  Split(int64_t units, int64_t groups, int64_t want, int64_t max_groups) {
    int64_t n = units >= want ? 1 : std::min(groups, (want + units - 1) / units);
    n = std::max(n, (groups + max_groups - 1) / max_groups);
    per_task = (groups + n - 1) / n;
    per_row = (groups + per_task - 1) / per_task;
    tasks = units * per_row;
  }
};

// Small M (<= kStreamM): a task is (batch, range of up to 4096 columns), one
// per thread when possible; its A rows are decoded whole. B streams through
// strip() KS rows at a time, whole task rows per chunk (so B is read almost
// sequentially, once), each group of up to 8 rows decoding it from cache.
void gemm_streaming(const Float8Problem& p) {
  const DecodeAFn decode_a = pick_decoder<PickA>(p.a_type);
  const auto& strips_for = pick_decoder<PickStrip>(p.b_type);
  const Epilogue epilogue(p);
  const Split split(p.batches, (p.N + 63) / 64, p.threads, 64);  // <= 4096 columns per task
  const int64_t width = split.per_task * 64;
  const int64_t lda = (std::max<int64_t>(p.K, 1) + 31) / 32 * 32;

  run_tasks_region(p.threads, split.tasks, [&] {
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
                 a_buf.data(), lda, nullptr);
        decoded_for = batch;
      }
      for (int64_t j = 0; j < width; ++j)
        zb[static_cast<std::size_t>(j)] = j < cols ? *p.b_zero_point.at(batch, 0, j0 + j) : 0.0f;
      if (p.K == 0) std::fill(acc.begin(), acc.end(), 0.0f);
      const auto* b = static_cast<const uint8_t*>(p.b) + p.b_index[batch] * p.K * p.N + j0;
      for (int64_t k0 = 0; k0 < p.K; k0 += KS) {
        const int64_t kc = std::min(KS, p.K - k0);
        for (int64_t r = 0; r < p.M; r += kStripRows) {
          const int rows = static_cast<int>(std::min<int64_t>(kStripRows, p.M - r));
          const StripFn fn = strips_for[rows];
          const int64_t step = strip_columns(rows);
          for (int64_t s = 0; s < cols; s += step) {
            const int64_t left = cols - s;
            const __mmask64 mask = left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
            fn(kc, b + k0 * p.N + s, p.N, a_buf.data() + r * lda + k0, lda, zb.data() + s,
               acc.data() + r * width + s, width, k0 == 0, mask);
          }
        }
      }
      for (int64_t r = 0; r < p.M; ++r) epilogue.row(batch, r, j0, cols, acc.data() + r * width);
    }
  });
}

// The blocked driver's two engines: what its chunk buffers hold and which
// tile consumes them. Both run the chains of float8_gemm.h, so they agree bit
// for bit; the BF16 one needs Float8Problem::bf16_exact.
struct Fp32Engine {
  using AElem = float;
  using BElem = float;
  static constexpr int64_t kc_max = KC;
  DecodeAFn decode_a;
  DecodeBFn decode_b;
  explicit Fp32Engine(const Float8Problem& p)
      : decode_a(pick_decoder<PickA>(p.a_type)), decode_b(pick_decoder<PickB>(p.b_type)) {}
  static int64_t panel_size(int64_t kc) { return kc * NR; }
  void tile(int rows, int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
            bool first) const {
    kTiles[rows](kc, a, lda, b, c, ldc, first);
  }
};

struct Bf16Engine {
  using AElem = uint16_t;  // bfloat16 patterns
  using BElem = uint32_t;  // bfloat16 pairs
  static constexpr int64_t kc_max = 2 * KC;  // the same bytes per chunk as Fp32Engine
  DecodeABf16Fn decode_a;
  DecodeBBf16Fn decode_b;
  const Bf16TileFn* tiles;
  explicit Bf16Engine(const Float8Problem& p)
      : decode_a(pick_decoder<PickABf16>(p.a_type)),
        decode_b(pick_decoder<PickBBf16>(p.b_type)),
        tiles(float8_bf16_tiles()) {}
  static int64_t panel_size(int64_t kc) { return (kc + 1) / 2 * NR; }
  void tile(int rows, int64_t kc, const uint16_t* a, int64_t lda, const uint32_t* b, float* c, int64_t ldc,
            bool first) const {
    tiles[rows]((kc + 1) / 2, a, lda, b, c, ldc, first);
  }
};

// Where the BF16 panels of B rows [k0, k0 + kc) and columns [j0, j0 + NB)
// (j0 = block * NB; k0 a multiple of Bf16Engine::kc_max) of one B matrix
// start: the decode_b_chunk_bf16 output of that chunk, for chunk after chunk
// of each column block, block after block.
struct Bf16PanelLayout {
  int64_t pairs = 0;  // pairs of a whole column, over all chunks
  int64_t col_blocks = 0;
  Bf16PanelLayout(int64_t K, int64_t N)
      : pairs(K / Bf16Engine::kc_max * (Bf16Engine::kc_max / 2) + (K % Bf16Engine::kc_max + 1) / 2),
        col_blocks((N + NB - 1) / NB) {}
  int64_t matrix_words() const { return col_blocks * NB * pairs; }
  int64_t offset(int64_t block, int64_t k0) const { return block * NB * pairs + NB * (k0 / 2); }
};

// A task is (batch, block of up to MC rows, range of NB-column blocks). Per
// column block and chunk of up to kc_max k: decode the A chunk [rows][kc_max]
// and the B chunk (as NR-column panels), run the tiles, carry the
// accumulators in [rows][NB]; requantize the block after its last chunk.
template <class Engine>
void gemm_blocked(const Float8Problem& p) {
  using AElem = typename Engine::AElem;
  using BElem = typename Engine::BElem;
  constexpr int64_t kcm = Engine::kc_max;
  const Engine engine(p);
  const Epilogue epilogue(p);
  const int64_t m_blocks = (p.M + MC - 1) / MC;
  const int64_t mc = ((p.M + m_blocks - 1) / m_blocks + MR - 1) / MR * MR;  // balanced, whole tiles
  const int64_t col_blocks = (p.N + NB - 1) / NB;
  const Split split(p.batches * m_blocks, col_blocks, 4 * static_cast<int64_t>(p.threads), col_blocks);
  const Bf16PanelLayout prepacked(p.K, p.N);

  run_tasks_region(p.threads, split.tasks, [&] {
    std::vector<AElem> a_buf(static_cast<std::size_t>(mc * kcm));
    std::vector<float> za(static_cast<std::size_t>(mc));
    std::vector<float> acc(static_cast<std::size_t>(mc * NB)), zb(static_cast<std::size_t>(NB));
    static_assert(sizeof(BElem) == 4);
    std::vector<BElem> b_storage(static_cast<std::size_t>(NB / NR * Engine::panel_size(kcm) + 16));
    BElem* b_buf = b_storage.data() + (16 - (reinterpret_cast<uintptr_t>(b_storage.data()) / 4) % 16) % 16;

#pragma omp for schedule(dynamic, 1)  // results do not depend on which thread runs a task
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
        for (int64_t k0 = 0; k0 < p.K; k0 += kcm) {
          const int64_t kc = std::min(kcm, p.K - k0);
          // The next chunk: further along k, or the first one of the next column block.
          const uint8_t* next = k0 + kcm < p.K ? a + k0 + kcm : block + 1 < block_end ? a : nullptr;
          engine.decode_a(a + k0, p.K, rows, kc, za.data(), a_buf.data(), kcm, next);
          const BElem* b_chunk = b_buf;
          if constexpr (std::is_same_v<Engine, Bf16Engine>) {
            if (p.b_bf16_panels != nullptr)
              b_chunk = p.b_bf16_panels + p.b_index[batch] * prepacked.matrix_words() + prepacked.offset(block, k0);
            else
              engine.decode_b(b + k0 * p.N + j0, p.N, kc, cols, zb.data(), b_buf);
          } else {
            engine.decode_b(b + k0 * p.N + j0, p.N, kc, cols, zb.data(), b_buf);
          }
          for (int64_t panel = 0; panel < panels; ++panel) {
            const BElem* bp = b_chunk + panel * Engine::panel_size(kc);
            for (int64_t r = 0; r < rows; r += MR) {
              const int rr = static_cast<int>(std::min<int64_t>(MR, rows - r));
              engine.tile(rr, kc, a_buf.data() + r * kcm, kcm, bp, acc.data() + r * NB + panel * NR, NB, k0 == 0);
            }
          }
        }
        for (int64_t r = 0; r < rows; ++r) epilogue.row(batch, i0 + r, j0, cols, acc.data() + r * NB);
      }
    }
  });
}

}  // namespace

bool float8_avx512_compiled() { return true; }

void float8_gemm_avx512(const Float8Problem& p, bool use_bf16) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  if (p.M <= kStreamM)
    gemm_streaming(p);
  else if (use_bf16 && p.bf16_exact && float8_bf16_tiles() != nullptr)
    gemm_blocked<Bf16Engine>(p);
  else
    gemm_blocked<Fp32Engine>(p);
}

void float8_requantize_avx512(const Float8Problem& p, const int32_t* c) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const Epilogue epilogue(p);
  const int64_t rows = p.batches * p.M;
  run_tasks_region(p.threads, rows, [&] {
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) epilogue.row(row / p.M, row % p.M, 0, p.N, c + row * p.N);
  });
}

int64_t float8_bf16_panel_words(int64_t K, int64_t N) { return Bf16PanelLayout(K, N).matrix_words(); }

void float8_pack_b_bf16_avx512(const uint8_t* b, ElementType type, int64_t batches, int64_t K, int64_t N,
                               int threads, uint32_t* out) {
  const DecodeBBf16Fn decode = pick_decoder<PickBBf16>(type);
  const Bf16PanelLayout layout(K, N);
  const int64_t tasks = batches * layout.col_blocks;
  const std::vector<float> zeros(static_cast<std::size_t>(NB), 0.0f);
  run_tasks_region(threads, tasks, [&] {
#pragma omp for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t batch = task / layout.col_blocks, block = task % layout.col_blocks;
      const int64_t j0 = block * NB, cols = std::min<int64_t>(NB, N - j0);
      for (int64_t k0 = 0; k0 < K; k0 += Bf16Engine::kc_max)
        decode(b + batch * K * N + k0 * N + j0, N, std::min(Bf16Engine::kc_max, K - k0), cols, zeros.data(),
               out + batch * layout.matrix_words() + layout.offset(block, k0));
    }
  });
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
void float8_gemm_avx512(const Float8Problem&, bool) { absent(); }
void float8_requantize_avx512(const Float8Problem&, const int32_t*) { absent(); }
void float8_encode_doubles_avx512(const double*, int64_t, ElementType, uint8_t*) { absent(); }
int64_t float8_bf16_panel_words(int64_t, int64_t) { absent(); }
void float8_pack_b_bf16_avx512(const uint8_t*, ElementType, int64_t, int64_t, int64_t, int, uint32_t*) { absent(); }

}  // namespace qmatmul::gemm::detail

#endif

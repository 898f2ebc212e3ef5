// The portable float8 GEMM and requantization, and the choice of path.
// Plain C++ written straight from the order defined in float8_gemm.h: for a
// block of up to 8 rows, their a_f rows are decoded once; then k ascending,
// the B row segment is decoded (256-entry table, minus the column zero
// points) and every row's float32 accumulators take one std::fma each. The
// scalar epilogue here is the definition the AVX-512 epilogue reproduces.
// OpenMP splits (batch, row block, column block) tasks; each output element
// belongs to exactly one task, so threads never change a result.
#include "gemm/float8_gemm.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "cpu/cpu_features.h"
#include "kernels/dispatch.h"
#include "numeric/float8.h"

namespace qmatmul::gemm {
namespace {

constexpr std::array<float, 256> make_int_table(bool is_signed) {
  std::array<float, 256> t{};
  for (int code = 0; code < 256; ++code)
    t[static_cast<std::size_t>(code)] = static_cast<float>(is_signed && code >= 128 ? code - 256 : code);
  return t;
}
constexpr std::array<float, 256> kUint8Table = make_int_table(false);
constexpr std::array<float, 256> kInt8Table = make_int_table(true);

// Every operand code as float32 (exact): float8 decoded, int8/uint8 converted.
const float* operand_table(ElementType t) {
  if (t == ElementType::Uint8) return kUint8Table.data();
  if (t == ElementType::Int8) return kInt8Table.data();
  return numeric::float8_table(t);
}

constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 * 2^52: RNE for |x| < 2^51

// Writes one requantized output element: v already = double(C)*double(m)+double(zp).
struct OutputStore {
  ElementType type;
  const numeric::Float8Format* f8 = nullptr;  // float8 output
  double lo = 0, hi = 0;                      // integer output range

  explicit OutputStore(ElementType t) : type(t) {
    if (is_float8(t)) {
      f8 = &numeric::float8_format(t);
    } else {
      lo = t == ElementType::Uint8 ? 0.0 : -128.0;
      hi = t == ElementType::Uint8 ? 255.0 : 127.0;
    }
  }
  void store(double v, void* y, std::size_t index) const {
    if (f8) {
      static_cast<uint8_t*>(y)[index] = numeric::float8_encode(v, *f8);
      return;
    }
    if (v != v) v = 0.0;  // NaN -> 0
    v = std::clamp(v, lo, hi);
    const double r = (v + kRoundMagic) - kRoundMagic;
    if (type == ElementType::Uint8)
      static_cast<uint8_t*>(y)[index] = static_cast<uint8_t>(static_cast<int32_t>(r));
    else
      static_cast<int8_t*>(y)[index] = static_cast<int8_t>(static_cast<int32_t>(r));
  }
};

// Requantizes columns [j0, j0+cols) of output row (batch, i) from accumulators
// c[0..cols) (float32 or int32; both widen exactly to double).
template <typename Acc>
void store_row(const Float8Problem& p, const OutputStore& out, int64_t batch, int64_t i, int64_t j0, int64_t cols,
               const Acc* c) {
  const float as = *p.a_scale.at(batch, i, 0);
  const float* bs = p.b_scale.at(batch, 0, j0);
  const float* ys = p.y_scale.at(batch, i, j0);
  const float* yz = p.y_zero_point.at(batch, i, j0);
  const std::size_t first = static_cast<std::size_t>((batch * p.M + i) * p.N + j0);
  for (int64_t j = 0; j < cols; ++j) {
    const float ab = as * bs[j * p.b_scale.col_stride];  // first float32 rounding
    const float m = ab / ys[j * p.y_scale.col_stride];   // second
    const double v = static_cast<double>(c[j]) * static_cast<double>(m) +
                     static_cast<double>(yz[j * p.y_zero_point.col_stride]);
    out.store(v, p.y, first + static_cast<std::size_t>(j));
  }
}

constexpr int64_t kColumnBlock = 256;
constexpr int64_t kRowBlock = 8;

// acc[r][j] (row stride kColumnBlock) = the chains of `rows` rows over
// columns [0, cols) of B (`b` at row 0, row stride ldb): k ascending, each
// B row decoded once into b_row and used by every row. With GCC on x86-64 a
// second copy is compiled for AVX+FMA and picked at load time (ifunc); the
// fma is the same operation there, so the bits are too.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("fma", "default")))
#endif
void portable_chains(int64_t K, int64_t rows, int64_t cols, const float* __restrict a_rows,
                     const uint8_t* __restrict b, int64_t ldb, const float* __restrict b_table,
                     const float* __restrict zb, float* __restrict b_row, float* __restrict acc) {
  constexpr int64_t W = 16;  // fixed-width inner loops, which the vectorizer takes whole
  const int64_t whole = cols / W * W;
  for (int64_t k = 0; k < K; ++k) {
    const uint8_t* bk = b + k * ldb;
    for (int64_t j = 0; j < cols; ++j) b_row[j] = b_table[bk[j]] - zb[j];
    for (int64_t r = 0; r < rows; ++r) {
      const float ak = a_rows[r * K + k];
      float* __restrict c = acc + r * kColumnBlock;
      for (int64_t j = 0; j < whole; j += W)
        for (int64_t l = 0; l < W; ++l) c[j + l] = std::fma(ak, b_row[j + l], c[j + l]);
      for (int64_t j = whole; j < cols; ++j) c[j] = std::fma(ak, b_row[j], c[j]);
    }
  }
}

void gemm_portable(const Float8Problem& p) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const float* a_table = operand_table(p.a_type);
  const float* b_table = operand_table(p.b_type);
  const OutputStore out(p.y_type);
  const int64_t row_blocks = (p.M + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = (p.N + kColumnBlock - 1) / kColumnBlock;
  const int64_t tasks = p.batches * row_blocks * col_blocks;

#pragma omp parallel num_threads(p.threads) if (p.threads > 1 && tasks > 1)
  {
    std::vector<float> a_rows(static_cast<std::size_t>(kRowBlock * p.K));
    std::vector<float> zb(static_cast<std::size_t>(kColumnBlock)), b_row(static_cast<std::size_t>(kColumnBlock));
    std::vector<float> acc(static_cast<std::size_t>(kRowBlock * kColumnBlock));
    int64_t decoded = -1;  // row task whose a_f rows are in a_rows

#pragma omp for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t row_task = task / col_blocks, block = task % col_blocks;
      const int64_t batch = row_task / row_blocks, i0 = (row_task % row_blocks) * kRowBlock;
      const int64_t rows = std::min(kRowBlock, p.M - i0);
      const int64_t j0 = block * kColumnBlock, cols = std::min(kColumnBlock, p.N - j0);
      if (decoded != row_task) {
        for (int64_t r = 0; r < rows; ++r) {
          const auto* a = static_cast<const uint8_t*>(p.a) + (p.a_index[batch] * p.M + i0 + r) * p.K;
          const float za = *p.a_zero_point.at(batch, i0 + r, 0);
          for (int64_t k = 0; k < p.K; ++k) a_rows[static_cast<std::size_t>(r * p.K + k)] = a_table[a[k]] - za;
        }
        decoded = row_task;
      }
      for (int64_t j = 0; j < cols; ++j) zb[static_cast<std::size_t>(j)] = *p.b_zero_point.at(batch, 0, j0 + j);
      std::fill(acc.begin(), acc.end(), 0.0f);
      const auto* b = static_cast<const uint8_t*>(p.b) + p.b_index[batch] * p.K * p.N + j0;
      portable_chains(p.K, rows, cols, a_rows.data(), b, p.N, b_table, zb.data(), b_row.data(), acc.data());
      for (int64_t r = 0; r < rows; ++r) store_row(p, out, batch, i0 + r, j0, cols, acc.data() + r * kColumnBlock);
    }
  }
}

void requantize_portable(const Float8Problem& p, const int32_t* c) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const OutputStore out(p.y_type);
  const int64_t rows = p.batches * p.M;
#pragma omp parallel for num_threads(p.threads) schedule(static) if (p.threads > 1 && rows > 1)
  for (int64_t row = 0; row < rows; ++row)
    store_row(p, out, row / p.M, row % p.M, 0, p.N, c + row * p.N);
}

Float8Path resolve(Float8Path path) {
  if (path == Float8Path::Auto) return float8_auto_path();
  if (path == Float8Path::Avx512 && !float8_avx512_usable())
    throw Error("float8: the AVX-512 path is not available (not compiled, or this CPU lacks AVX-512)");
  return path;
}

}  // namespace

bool float8_avx512_usable() { return detail::float8_avx512_compiled() && cpu::features().avx512vnni; }

Float8Path float8_auto_path() {
  static const Float8Path chosen = [] {
    const auto* isa = kernels::dispatch().chosen;
    if (isa != nullptr && isa->isa == kernels::Isa::Avx512Vnni && float8_avx512_usable()) return Float8Path::Avx512;
    return Float8Path::Portable;
  }();
  return chosen;
}

void run_float8_gemm(const Float8Problem& p, Float8Path path) {
  if (resolve(path) == Float8Path::Avx512)
    detail::float8_gemm_avx512(p);
  else
    gemm_portable(p);
}

void requantize_int32_to_float8(const Float8Problem& p, const int32_t* c, Float8Path path) {
  if (resolve(path) == Float8Path::Avx512)
    detail::float8_requantize_avx512(p, c);
  else
    requantize_portable(p, c);
}

void float8_encode_avx512(const double* v, int64_t n, ElementType type, uint8_t* out) {
  resolve(Float8Path::Avx512);
  detail::float8_encode_doubles_avx512(v, n, type, out);
}

}  // namespace qmatmul::gemm

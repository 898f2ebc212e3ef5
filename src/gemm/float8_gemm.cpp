// The portable float8 GEMM and requantization, and the choice of path.
// Plain C++ written straight from the order defined in float8_gemm.h: for a
// block of up to 8 rows, their a_f rows are decoded once; then k in the
// defined order (pairs ascending, odd k first), the B row segment is decoded (256-entry table, minus the column zero
// points) and every row's float32 accumulators take one std::fma each. The
// scalar epilogue here is the definition the AVX-512 epilogue reproduces.
// OpenMP splits (batch, row block, column block) tasks; each output element
// belongs to exactly one task, so threads never change a result.
#include "gemm/float8_gemm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu/cpu_features.h"
#include "gemm/parallel_region.h"
#include "gemm/x86/float8_bf16_tile.h"
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
// columns [0, cols) of B (`b` at row 0, row stride ldb): k in the defined order, each
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
  for_each_k_in_chain_order(K, [&](int64_t k) {
    const uint8_t* bk = b + k * ldb;
    for (int64_t j = 0; j < cols; ++j) b_row[j] = b_table[bk[j]] - zb[j];
    for (int64_t r = 0; r < rows; ++r) {
      const float ak = a_rows[r * K + k];
      float* __restrict c = acc + r * kColumnBlock;
      for (int64_t j = 0; j < whole; j += W)
        for (int64_t l = 0; l < W; ++l) c[j + l] = std::fma(ak, b_row[j + l], c[j + l]);
      for (int64_t j = whole; j < cols; ++j) c[j] = std::fma(ak, b_row[j], c[j]);
    }
  });
}

void gemm_portable(const Float8Problem& p) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const float* a_table = operand_table(p.a_type);
  const float* b_table = operand_table(p.b_type);
  const OutputStore out(p.y_type);
  const int64_t row_blocks = (p.M + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = (p.N + kColumnBlock - 1) / kColumnBlock;
  const int64_t tasks = p.batches * row_blocks * col_blocks;

  run_tasks_region(p.threads, tasks, [&] {
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
  });
}

void requantize_portable(const Float8Problem& p, const int32_t* c) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const OutputStore out(p.y_type);
  const int64_t rows = p.batches * p.M;
  run_tasks_region(p.threads, rows, [&] {
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row)
      store_row(p, out, row / p.M, row % p.M, 0, p.N, c + row * p.N);
  });
}

Float8Path resolve(Float8Path path) {
  if (path == Float8Path::Auto) return float8_auto_path();
  if (path == Float8Path::Avx512 && !float8_avx512_usable())
    throw Error("float8: the AVX-512 path is not available (not compiled, or this CPU lacks AVX-512)");
  if (path == Float8Path::Avx512Bf16 && !float8_bf16_usable())
    throw Error("float8: the AVX-512 BF16 path is not available (not compiled, this CPU lacks AVX-512 BF16, "
                "or its vdpbf16ps does not round in the defined order)");
  return path;
}

// Runs the BF16 tile on 8 rows x 32 columns x 8 pairs of pseudo-random
// bfloat16 values (mixed magnitudes, so that a different order or a single
// rounding of a pair would change many lanes) starting from non-zero
// accumulators, and compares with the defined chain computed by std::fma.
bool bf16_tile_matches_definition() {
  const detail::Bf16TileFn* tiles = detail::float8_bf16_tiles();
  if (tiles == nullptr) return false;
  constexpr int R = detail::kBf16TileRows, NC = 32, P = 8;
  uint32_t state = 12345;
  const auto next_bf16 = [&state] {
    state = state * 1664525u + 1013904223u;
    const uint32_t exponent = 127 - 12 + ((state >> 8) % 24), mantissa = (state >> 16) & 0x7F;
    return static_cast<uint16_t>(((state >> 31) << 15) | (exponent << 7) | mantissa);
  };
  const auto value = [](uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); };
  std::vector<uint16_t> a(R * 2 * P);
  std::vector<uint32_t> b_storage(P * NC + 16);
  uint32_t* b = b_storage.data() + (16 - (reinterpret_cast<uintptr_t>(b_storage.data()) / 4) % 16) % 16;
  std::vector<float> c(R * NC), expect(R * NC);
  for (auto& x : a) x = next_bf16();
  for (int i = 0; i < P * NC; ++i) b[i] = static_cast<uint32_t>(next_bf16()) | static_cast<uint32_t>(next_bf16()) << 16;
  for (auto& x : c) x = value(next_bf16());
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NC; ++j) {
      float acc = c[static_cast<std::size_t>(r * NC + j)];
      for (int p = 0; p < P; ++p) {
        const uint32_t w = b[p * NC + j];
        acc = std::fma(value(a[static_cast<std::size_t>(r * 2 * P + 2 * p + 1)]), value(static_cast<uint16_t>(w >> 16)), acc);
        acc = std::fma(value(a[static_cast<std::size_t>(r * 2 * P + 2 * p)]), value(static_cast<uint16_t>(w)), acc);
      }
      expect[static_cast<std::size_t>(r * NC + j)] = acc;
    }
  tiles[R](P, a.data(), 2 * P, b, c.data(), NC, false);
  for (std::size_t i = 0; i < c.size(); ++i)
    if (std::bit_cast<uint32_t>(c[i]) != std::bit_cast<uint32_t>(expect[i])) return false;
  return true;
}

}  // namespace

bool bf16_exact_operand(ElementType t, const float* zero_points, std::size_t n) {
  if (t == ElementType::Int8 || t == ElementType::Uint8) return true;
  for (std::size_t i = 0; i < n; ++i)
    if (zero_points[i] != 0.0f) return false;  // NaN compares unequal: not exact either
  return true;
}

Float8PackedB pack_b_float8(const void* b, ElementType type, int64_t batches, int64_t K, int64_t N, int threads) {
  Float8PackedB out;
  out.type = type;
  out.batches = batches;
  out.K = K;
  out.N = N;
  const auto* codes = static_cast<const uint8_t*>(b);
  out.codes.assign(codes, codes + batches * K * N);
  if (batches * K * N > 0 && float8_auto_path() == Float8Path::Avx512Bf16) {
    const int64_t words = batches * detail::float8_bf16_panel_words(K, N);
    out.bf16_panels = AlignedBuffer(static_cast<std::size_t>(words) * sizeof(uint32_t));
    detail::float8_pack_b_bf16_avx512(codes, type, batches, K, N, threads,
                                      static_cast<uint32_t*>(out.bf16_panels.data()));
  }
  return out;
}

bool float8_avx512_usable() {
  return detail::float8_avx512_compiled() && kernels::cpu_supports(kernels::Isa::Avx512Vnni);
}

bool float8_bf16_usable() {
  static const bool usable = float8_avx512_usable() && detail::float8_bf16_compiled() && cpu::features().avx512bf16 &&
                             bf16_tile_matches_definition();
  return usable;
}

const char* float8_path_name(Float8Path path) {
  switch (path) {
    case Float8Path::Auto: return "auto";
    case Float8Path::Portable: return "portable";
    case Float8Path::Avx512: return "avx512";
    case Float8Path::Avx512Bf16: return "avx512bf16";
  }
  return "?";
}

Float8Path float8_auto_path() {
  static const Float8Path chosen = [] {
    const auto* isa = kernels::dispatch().chosen;
    if (isa != nullptr && kernels::is_avx512vnni_family(isa->isa) && float8_avx512_usable())
      return float8_bf16_usable() ? Float8Path::Avx512Bf16 : Float8Path::Avx512;
    return Float8Path::Portable;
  }();
  return chosen;
}

void run_float8_gemm(const Float8Problem& p, Float8Path path) {
  const Float8Path resolved = resolve(path);
  if (resolved == Float8Path::Portable)
    gemm_portable(p);
  else
    detail::float8_gemm_avx512(p, resolved == Float8Path::Avx512Bf16);
}

void requantize_int32_to_float8(const Float8Problem& p, const int32_t* c, Float8Path path) {
  if (resolve(path) == Float8Path::Portable)
    requantize_portable(p, c);
  else
    detail::float8_requantize_avx512(p, c);
}

void float8_encode_avx512(const double* v, int64_t n, ElementType type, uint8_t* out) {
  resolve(Float8Path::Avx512);
  detail::float8_encode_doubles_avx512(v, n, type, out);
}

}  // namespace qmatmul::gemm

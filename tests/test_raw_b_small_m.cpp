// The raw-B kernels (src/gemm/raw_b_small_m.h) for M <= 16: AVX-512 VNNI
// and AVX2, each on a CPU that runs it, checked against plain loops
// over the same bytes written here from the header's contract, with za'
// of each row among 0, 255 and values between (wrapping int32, b' =
// int8(B[k][c0 + j] XOR flip)):
//
//   plain form (AVX-512 VNNI):  acc[i][j] = sum_k a[i][k] * b',  col_sums[j] = sum_k b'
//   folded form (AVX2):         acc[i][j] = sum_k (a[i][k] - za'[i]) * b',  col_sums[j] = 0
//
// for every m with a kernel of its own and three counts of the kernel that
// takes its count at run time (17, 37, 64; large-B form only), both forms
// (the large-B form prefetches), both flips, K with
// and without a partial k-group or k-pair (and shorter than one step, or
// spanning many), column counts around the 64-column chunk (tails read with
// masked loads), the AVX2 kernels' 16-column chunk and their narrow
// form's 8-column one (tails read through a
// copy) and past the driver's 256-column blocks, a column offset into a
// wider matrix, A' rows packed tight or at the driver's stride
// (raw_b_a_row_stride), the full 8-bit range, and int32 wrap-around. B is an exact-size heap allocation, so a read past
// its end is caught under AddressSanitizer. The end-to-end paths (zero
// points, requantization, threads) are covered by the differential suite,
// which runs these kernels for the unpacked calls with M <= 16 on AVX-512
// VNNI whose B is large enough for the path (raw_b_min_bytes), and in its
// runs with QMATMUL_ISA=avx2 and avxvnni (raw_b_min_bytes_avx2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_features.h"
#include "gemm/raw_b_small_m.h"

namespace qmatmul::gemm {
namespace {

bool cpu_runs_avx512vnni() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

bool cpu_runs_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// One family of raw-B kernels: the row counts tested and its kernel for m
// rows in each form (the AVX2 family has one form: both give the same
// kernel). AVX-512 VNNI: every count with a kernel of its own, then three
// counts of the kernel that takes its count at run time (the first, an odd
// one and the last).
struct Family {
  const char* name;
  std::vector<int> rows;
  bool (*cpu_runs)();
  RawBSmallMFn (*kernel)(int m, bool large_b);
  bool folds_a_zero;  // the folded form of raw_b_small_m.h, else the plain one
};

void PrintTo(const Family& f, std::ostream* os) { *os << f.name; }

std::vector<int> rows_up_to(int last, std::vector<int> more = {}) {
  std::vector<int> rows;
  for (int m = 1; m <= last; ++m) rows.push_back(m);
  rows.insert(rows.end(), more.begin(), more.end());
  return rows;
}

const Family kAvx512Vnni{"avx512vnni", rows_up_to(kMaxRowsOwnKernel, {kMaxRowsOwnKernel + 1, 37, kMaxRows}),
                         cpu_runs_avx512vnni,
                         [](int m, bool large_b) { return raw_b_small_m_avx512vnni_fn(m, large_b); }, false};
const Family kAvx2{"avx2", rows_up_to(kMaxRowsOwnKernel, {kMaxRowsOwnKernel + 1, 37, kMaxRowsAvx2}), cpu_runs_avx2,
                   [](int m, bool) { return raw_b_small_m_avx2_fn(m); }, true};
// The narrow form runs on any AVX2 CPU, whichever form the path takes there.
const Family kAvx2Narrow{"avx2_narrow", rows_up_to(kMaxRowsNarrowAvx2), cpu_runs_avx2,
                         [](int m, bool) { return raw_b_small_m_avx2_narrow_fn(m); }, true};

struct Free {
  void operator()(void* p) const { std::free(p); }
};

struct Case {
  int m;
  int64_t K, N, c0, cols;
  unsigned char flip;
};

// Runs one case with the given bytes of B (K x N) and A' (m x K) on one form
// of the kernel, and checks every output column against the plain loops.
void check_form(const Case& c, const std::vector<unsigned char>& b_bytes, const std::vector<uint8_t>& a_rows,
                RawBSmallMFn kernel, bool folds_a_zero) {
  ASSERT_NE(kernel, nullptr);
  // za' per row: the extremes and values between, shifted by K so that
  // each row count meets several.
  const int32_t kZa[] = {0, 255, 128, 1, 200, 77};
  std::vector<int32_t> za(static_cast<std::size_t>(c.m));
  for (int i = 0; i < c.m; ++i) za[static_cast<std::size_t>(i)] = kZa[(i + c.K) % 6];
  // A' rows tight (K rounded up to 4) for odd m, at the driver's stride for even m.
  const int64_t kp = c.m % 2 == 1 ? (c.K + 3) / 4 * 4 : raw_b_a_row_stride(c.K);
  std::vector<uint8_t> a(static_cast<std::size_t>(c.m * kp), 0);  // zero padded to kp
  for (int i = 0; i < c.m; ++i)
    for (int64_t k = 0; k < c.K; ++k) a[static_cast<std::size_t>(i * kp + k)] = a_rows[static_cast<std::size_t>(i * c.K + k)];
  std::unique_ptr<unsigned char[]> b(new unsigned char[static_cast<std::size_t>(c.K * c.N)]);  // exact size
  for (int64_t i = 0; i < c.K * c.N; ++i) b[static_cast<std::size_t>(i)] = b_bytes[static_cast<std::size_t>(i)];
  const int64_t ld = (c.cols + 63 + 63) / 64 * 64 + 16;  // wider than the contract asks
  std::unique_ptr<int32_t, Free> acc(static_cast<int32_t*>(std::aligned_alloc(64, sizeof(int32_t) * c.m * ld)));
  std::unique_ptr<int32_t, Free> sums(static_cast<int32_t*>(std::aligned_alloc(64, sizeof(int32_t) * ld)));
  const int64_t s =
      kernel(a.data(), c.m, kp, za.data(), b.get() + c.c0, c.K, c.N, c.cols, c.flip, acc.get(), ld, sums.get());
  ASSERT_GE(s, 0);
  ASSERT_LT(s, 64);
  if (c.N % 64 != 0) {
    EXPECT_EQ(s, 0);
  }
  for (int64_t j = 0; j < c.cols; ++j) {
    uint32_t col = 0;
    std::vector<uint32_t> row(static_cast<std::size_t>(c.m), 0);
    for (int64_t k = 0; k < c.K; ++k) {
      const int32_t v = static_cast<int8_t>(static_cast<unsigned char>(b[static_cast<std::size_t>(k * c.N + c.c0 + j)] ^ c.flip));
      col += static_cast<uint32_t>(v);
      for (int i = 0; i < c.m; ++i) {
        const int32_t a_term = a_rows[static_cast<std::size_t>(i * c.K + k)] - (folds_a_zero ? za[static_cast<std::size_t>(i)] : 0);
        row[static_cast<std::size_t>(i)] += static_cast<uint32_t>(a_term) * static_cast<uint32_t>(v);
      }
    }
    ASSERT_EQ(sums.get()[s + j], folds_a_zero ? 0 : static_cast<int32_t>(col)) << "column sum " << j;
    for (int i = 0; i < c.m; ++i)
      ASSERT_EQ(acc.get()[i * ld + s + j], static_cast<int32_t>(row[static_cast<std::size_t>(i)])) << "row " << i << " column " << j;
  }
}

// The family's kernels for one case: every form.
class RawBSmallM : public ::testing::TestWithParam<Family> {
 protected:
  void SetUp() override {
    const Family& f = GetParam();
    if (f.kernel(1, false) == nullptr) GTEST_SKIP() << f.name << " raw-B kernel not compiled into this build";
    if (!f.cpu_runs()) GTEST_SKIP() << "this CPU cannot run " << f.name;
  }
  const std::vector<int>& rows() const { return GetParam().rows; }
  void check(const Case& c, const std::vector<unsigned char>& b_bytes, const std::vector<uint8_t>& a_rows) const {
    const Family& f = GetParam();
    if (c.m <= kMaxRowsOwnKernel) {  // beyond, only the large-B form exists
      SCOPED_TRACE("plain form");
      check_form(c, b_bytes, a_rows, f.kernel(c.m, false), f.folds_a_zero);
    }
    if (f.kernel(c.m, true) != f.kernel(c.m, false)) {
      SCOPED_TRACE("large-B form");
      check_form(c, b_bytes, a_rows, f.kernel(c.m, true), f.folds_a_zero);
    }
  }
};

INSTANTIATE_TEST_SUITE_P(Kernels, RawBSmallM, ::testing::Values(kAvx512Vnni, kAvx2, kAvx2Narrow),
                         [](const ::testing::TestParamInfo<Family>& info) { return std::string(info.param.name); });

TEST(RawBSmallMGetter, OnlyOneToMaxRows) {
  EXPECT_EQ(raw_b_small_m_avx512vnni_fn(0), nullptr);
  EXPECT_EQ(raw_b_small_m_avx512vnni_fn(kMaxRows + 1), nullptr);
  EXPECT_EQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, kMaxRows + 1, 4096, 4096), nullptr);
  EXPECT_EQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, 0, 4096, 4096), nullptr);
  // The path follows the dispatch choice: never for the portable path.
  EXPECT_EQ(raw_b_small_m_kernel(kernels::Isa::Portable, 1, 4096, 4096), nullptr);
  // AVX2: its own kernels, any B up to 16 rows, kRawBLargeBytes from 17;
  // AVX-VNNI any B up to 3 rows, kRawBLargeBytes at 4 to 8, none from 9;
  // AVX-512 BW any B up to 4 rows, kRawBLargeBytes at 5 to 16, none from 17.
  EXPECT_EQ(raw_b_small_m_avx2_fn(0), nullptr);
  EXPECT_EQ(raw_b_small_m_avx2_fn(kMaxRowsAvx2 + 1), nullptr);
  const auto avx2 = [](int64_t m, int64_t k, int64_t n) { return raw_b_small_m_kernel(kernels::Isa::Avx2, m, k, n); };
  const auto avxvnni = [](int64_t m, int64_t k, int64_t n) {
    return raw_b_small_m_kernel(kernels::Isa::AvxVnni, m, k, n);
  };
  // The narrow form up to kMaxRowsNarrowAvx2 rows where the CPU splits
  // 256-bit operations, else the 16-column form.
  EXPECT_EQ(raw_b_small_m_avx2_narrow_fn(0), nullptr);
  EXPECT_EQ(raw_b_small_m_avx2_narrow_fn(kMaxRowsNarrowAvx2 + 1), nullptr);
  for (int m = 1; m <= kMaxRowsAvx2; ++m) {
    EXPECT_EQ(raw_b_small_m_avx2_for(m, false), raw_b_small_m_avx2_fn(m));
    EXPECT_EQ(raw_b_small_m_avx2_for(m, true),
              m <= kMaxRowsNarrowAvx2 && raw_b_small_m_avx2_fn(m) != nullptr ? raw_b_small_m_avx2_narrow_fn(m)
                                                                            : raw_b_small_m_avx2_fn(m));
  }
  const bool splits = cpu::features().splits_256;
  for (int m = 1; m <= kMaxRowsOwnKernel; ++m) {
    EXPECT_EQ(avx2(m, 1, 1), raw_b_small_m_avx2_for(m, splits));
    EXPECT_EQ(avx2(m, 4096, 4096), raw_b_small_m_avx2_for(m, splits));
  }
  // From 17 rows: kRawBLargeBytes of B, one kernel for every count.
  EXPECT_EQ(avx2(17, 2048, 4095), nullptr);
  EXPECT_EQ(avx2(17, 2048, 4096), raw_b_small_m_avx2_fn(17));
  EXPECT_EQ(raw_b_small_m_avx2_fn(17), raw_b_small_m_avx2_fn(kMaxRowsAvx2));
  EXPECT_EQ(raw_b_min_bytes_avx2(kernels::Isa::Avx2, 17), kRawBLargeBytes);
  EXPECT_EQ(avxvnni(17, 4096, 4096), nullptr);
  EXPECT_EQ(avx2(kMaxRowsAvx2 + 1, 4096, 4096), nullptr);
  EXPECT_EQ(avxvnni(3, 16, 16), raw_b_small_m_avx2_for(3, splits));
  EXPECT_EQ(avxvnni(4, 2048, 4095), nullptr);
  EXPECT_EQ(avxvnni(4, 2048, 4096), raw_b_small_m_avx2_for(4, splits));
  EXPECT_EQ(avxvnni(8, 2048, 4095), nullptr);
  EXPECT_EQ(avxvnni(8, 2048, 4096), raw_b_small_m_avx2_fn(8));
  EXPECT_EQ(avxvnni(9, 4096, 4096), nullptr);
  EXPECT_EQ(raw_b_min_bytes_avx2(kernels::Isa::Avx2, 9), 0);
  EXPECT_EQ(raw_b_min_bytes_avx2(kernels::Isa::AvxVnni, 9), -1);
  const auto avx512bw = [](int64_t m, int64_t k, int64_t n) {
    return raw_b_small_m_kernel(kernels::Isa::Avx512Bw, m, k, n);
  };
  EXPECT_EQ(avx512bw(4, 16, 16), raw_b_small_m_avx2_for(4, splits));
  EXPECT_EQ(avx512bw(5, 2048, 4095), nullptr);
  EXPECT_EQ(avx512bw(5, 2048, 4096), raw_b_small_m_avx2_fn(5));
  EXPECT_EQ(avx512bw(16, 2048, 4095), nullptr);
  EXPECT_EQ(avx512bw(16, 2048, 4096), raw_b_small_m_avx2_fn(16));
  EXPECT_EQ(avx512bw(17, 4096, 4096), nullptr);
  EXPECT_EQ(raw_b_min_bytes_avx2(kernels::Isa::Avx512Vnni, 1), -1);
  EXPECT_EQ(raw_b_min_bytes_avx2(kernels::Isa::Portable, 1), -1);
  if (raw_b_small_m_avx2_fn(1) != nullptr) {
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Avx2, 1, 64, 64),
                 splits ? "u8s8_rawb_1x8c2_int16__avx2" : "u8s8_rawb_1x16c2_int16__avx2");
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Avx2, 2, 64, 64), "u8s8_rawb_2x16c2_int16__avx2");
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::AvxVnni, 4, 4096, 4096), "u8s8_rawb_4x16c2_int16__avx2");
  }
  EXPECT_EQ(raw_b_small_m_name(kernels::Isa::AvxVnni, 4, 1024, 1024), nullptr);
  // Up to 9 rows from 32 KB of B; 10 to 14 rows from 128 KB, 15 and 16
  // from 1 MB.
  const auto vnni = [](int64_t m, int64_t k, int64_t n) {
    return raw_b_small_m_kernel(kernels::Isa::Avx512Vnni, m, k, n);
  };
  EXPECT_EQ(vnni(1, 1, 1), nullptr);
  EXPECT_EQ(vnni(1, 128, 255), nullptr);
  EXPECT_EQ(vnni(1, 128, 256), raw_b_small_m_avx512vnni_fn(1));
  EXPECT_EQ(vnni(9, 255, 128), nullptr);
  EXPECT_EQ(vnni(9, 256, 128), raw_b_small_m_avx512vnni_fn(9));
  EXPECT_EQ(vnni(10, 128, 1023), nullptr);
  EXPECT_EQ(vnni(10, 128, 1024), raw_b_small_m_avx512vnni_fn(10));
  EXPECT_EQ(vnni(14, 256, 512), raw_b_small_m_avx512vnni_fn(14));
  EXPECT_EQ(vnni(15, 1024, 1023), nullptr);
  EXPECT_EQ(vnni(15, 1024, 1024), raw_b_small_m_avx512vnni_fn(15));
  EXPECT_EQ(vnni(16, 2048, 512), raw_b_small_m_avx512vnni_fn(16));
  // From kRawBLargeBytes of B, the large-B form.
  EXPECT_EQ(vnni(8, 2048, 4095), raw_b_small_m_avx512vnni_fn(8));
  EXPECT_EQ(vnni(8, 2048, 4096), raw_b_small_m_avx512vnni_fn(8, true));
  EXPECT_EQ(vnni(16, 4096, 4096), raw_b_small_m_avx512vnni_fn(16, true));
  // From 17 to kMaxRows rows: only from kRawBLargeBytes, one kernel for
  // every count (it takes the count at run time), in the large-B form only.
  EXPECT_EQ(vnni(17, 2048, 4095), nullptr);
  EXPECT_EQ(vnni(17, 2048, 4096), raw_b_small_m_avx512vnni_fn(17, true));
  EXPECT_EQ(vnni(kMaxRows, 4096, 4096), raw_b_small_m_avx512vnni_fn(kMaxRows, true));
  EXPECT_EQ(vnni(kMaxRows + 1, 4096, 4096), nullptr);
  EXPECT_EQ(raw_b_small_m_avx512vnni_fn(17), nullptr);
  EXPECT_EQ(raw_b_small_m_avx512vnni_fn(17, true), raw_b_small_m_avx512vnni_fn(kMaxRows, true));
  EXPECT_EQ(raw_b_min_bytes(kMaxRowsOwnKernel + 1), kRawBLargeBytes);
  EXPECT_EQ(raw_b_small_m_avx512vnni_fn(4, true), raw_b_small_m_avx512vnni_fn(4));
  EXPECT_EQ(raw_b_small_m_avx512vnni_fn(kMaxRows + 1, true), nullptr);
  // Column blocks from kRawBLargeBytes: 4096 (whole rows at N = 4096) only
  // for up to 8 rows on one thread, 2048 for the rest; but on AVX-512 VNNI
  // 1024 at 5 to 8 rows on one thread, 512 on two threads and from 9 rows,
  // 256 from 17 rows.
  const kernels::Isa vnni_isa = kernels::Isa::Avx512Vnni, avx2_isa = kernels::Isa::Avx2;
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 1, kRawBLargeBytes, 1), 4096);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 4, kRawBLargeBytes, 1), 4096);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 5, kRawBLargeBytes, 1), 1024);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 8, kRawBLargeBytes, 1), 1024);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 9, kRawBLargeBytes, 1), 512);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 16, kRawBLargeBytes, 1), 512);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 17, kRawBLargeBytes, 1), 256);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 64, kRawBLargeBytes, 2), 256);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 1, kRawBLargeBytes, 2), 2048);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 4, kRawBLargeBytes, 2), 2048);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 5, kRawBLargeBytes, 2), 512);
  EXPECT_EQ(raw_b_block_cols(vnni_isa, 6, kRawBLargeBytes - 1, 1), 256);
  EXPECT_EQ(raw_b_block_cols(avx2_isa, 8, kRawBLargeBytes, 1), 4096);
  EXPECT_EQ(raw_b_block_cols(avx2_isa, 9, kRawBLargeBytes, 1), 2048);
  EXPECT_EQ(raw_b_block_cols(avx2_isa, 6, kRawBLargeBytes, 2), 2048);
  EXPECT_EQ(raw_b_block_cols(avx2_isa, 24, kRawBLargeBytes, 2), 2048);
  EXPECT_EQ(raw_b_block_cols(avx2_isa, 6, kRawBLargeBytes - 1, 1), 256);
  // Where compiled: from 5 rows a kernel of its own, and the name says which
  // form runs.
  if (raw_b_small_m_avx512vnni_fn(1) != nullptr) {
    EXPECT_NE(raw_b_small_m_avx512vnni_fn(5, true), raw_b_small_m_avx512vnni_fn(5));
    EXPECT_TRUE(raw_b_has_own_large_b_form(1));
    EXPECT_FALSE(raw_b_has_own_large_b_form(2));
    EXPECT_FALSE(raw_b_has_own_large_b_form(4));
    EXPECT_TRUE(raw_b_has_own_large_b_form(5));
    EXPECT_TRUE(raw_b_has_own_large_b_form(kMaxRows));
    EXPECT_FALSE(raw_b_has_own_large_b_form(kMaxRows + 1));
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, 8, 4096, 4096),
                 "u8s8_rawb_8x64c4__avx512vnni (large-B form)");
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, 8, 1024, 4096), "u8s8_rawb_8x64c4__avx512vnni");
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, 4, 4096, 4096), "u8s8_rawb_4x64c4__avx512vnni");
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, 24, 2048, 4096),
                 "u8s8_rawb_24x64c4__avx512vnni (large-B form)");
    EXPECT_EQ(raw_b_small_m_name(kernels::Isa::Avx512Vnni, 24, 2048, 4095), nullptr);
    // Under AMX the same kernels, up to kMaxRowsAmx rows.
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Amx, 8, 4096, 4096), "u8s8_rawb_8x64c4__avx512vnni (large-B form)");
    EXPECT_STREQ(raw_b_small_m_name(kernels::Isa::Amx, kMaxRowsAmx, 4096, 4096),
                 raw_b_small_m_name(kernels::Isa::Avx512Vnni, kMaxRowsAmx, 4096, 4096));
    EXPECT_EQ(raw_b_small_m_name(kernels::Isa::Amx, kMaxRowsAmx + 1, 4096, 4096), nullptr);
  }
}

TEST_P(RawBSmallM, RandomShapesBothFlips) {
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 63, 64, 65, 130};
  const int64_t widths[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 200, 255, 256, 257, 600};
  for (int m : rows())
    for (int64_t K : ks)
      for (int64_t cols : widths)
        for (unsigned char flip : {0x00, 0x80}) {
          const Case c{m, K, cols + 40, 19, cols, flip};  // columns [19, 19 + cols) of a wider B
          std::vector<unsigned char> b(static_cast<std::size_t>(c.K * c.N));
          for (auto& v : b) v = static_cast<unsigned char>(byte(rng));
          std::vector<uint8_t> a(static_cast<std::size_t>(m * K));
          for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
          SCOPED_TRACE(::testing::Message() << "m=" << m << " K=" << K << " cols=" << cols << " flip=" << int(flip));
          check(c, b, a);
        }
}

TEST_P(RawBSmallM, RowsSharingAnAlignmentShiftTheBlock) {
  // N a multiple of 64: the kernel aligns its loads by shifting the block
  // back to the line start; every column offset within a line is tried.
  std::mt19937 rng(64);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int m : rows())
    for (int64_t c0 : {0, 1, 19, 48, 63, 64, 100})
      for (int64_t cols : {1, 14, 63, 64, 65, 128}) {
        const Case c{m, 33, 256, c0, std::min<int64_t>(cols, 256 - c0), 0x80};
        std::vector<unsigned char> b(static_cast<std::size_t>(c.K * c.N));
        for (auto& v : b) v = static_cast<unsigned char>(byte(rng));
        std::vector<uint8_t> a(static_cast<std::size_t>(m * c.K));
        for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
        SCOPED_TRACE(::testing::Message() << "m=" << m << " c0=" << c0 << " cols=" << c.cols);
        check(c, b, a);
      }
}

TEST_P(RawBSmallM, BlockEndsAtTheLastByteOfB) {
  // The block covers the matrix's last columns: the tail chunk must not read
  // past the end of the last row.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int m : rows())
    for (int64_t N : {1, 33, 100}) {
      const Case c{m, 11, N, 0, N, 0x80};
      std::vector<unsigned char> b(static_cast<std::size_t>(c.K * N));
      for (auto& v : b) v = static_cast<unsigned char>(byte(rng));
      std::vector<uint8_t> a(static_cast<std::size_t>(m * c.K));
      for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
      check(c, b, a);
    }
}

TEST_P(RawBSmallM, FullRangeExtremes) {
  // A' in {0, 255}, B' in {-128, 127, -1, 0} (as read after the flip).
  for (int m : rows())
    for (unsigned char flip : {0x00, 0x80}) {
      const Case c{m, 37, 130, 0, 130, flip};
      std::vector<unsigned char> b(static_cast<std::size_t>(c.K * c.N));
      const unsigned char extremes[] = {0x80, 0x7F, 0xFF, 0x00};
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(extremes[(i * 7 + i / 131) % 4] ^ flip);
      std::vector<uint8_t> a(static_cast<std::size_t>(m * c.K));
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = (i % 5 == 3) ? 0 : 255;
      check(c, b, a);
    }
}

TEST_P(RawBSmallM, Int32WrapAround) {
  // 255 * -128 over 70000 rows is below -2^31: the sums wrap, as the packed
  // kernels' do.
  const Case c{1, 70000, 64, 0, 64, 0x00};
  std::vector<unsigned char> b(static_cast<std::size_t>(c.K * c.N), 0x80);
  std::vector<uint8_t> a(static_cast<std::size_t>(c.K), 255);
  check(c, b, a);
}

}  // namespace
}  // namespace qmatmul::gemm

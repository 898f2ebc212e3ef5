// Packing A for the exact int16 kernels (gemm::pack_a_rows with an MR x 16,
// KR = 2 kernel: AVX2 and AVX-512 BW): every tile height 1 to 6, which the
// AVX2 packer takes 16 k of each row at a time and the rest one value at a
// time, checked against the layout written out from its definition (block
// b, k-group g, row i holds the pair (a'[i][2g], a'[i][2g + 1]) as int16,
// a' = a for uint8 A and a + 128 for int8 A, zeros past K and past the
// rows), with the row sums of a' or without them (row_sums null: nothing is
// written there), and no byte written past the packed blocks. The same for
// the AMX kernel's A, whose k-group is 64 bytes (Int8GemmKernel::a_kr):
// block b, segment g, row i holds a'[i][64g .. 64g + 63].
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gemm/pack.h"
#include "kernels/dispatch.h"
#include "test_support.h"

namespace qmatmul::testing {
namespace {

using kernels::Int8GemmKernel;

// The kernels whose A' is int16 pairs: each AVX2-family main kernel that
// widens A and its tail heights.
std::vector<const Int8GemmKernel*> int16_pair_kernels() {
  std::vector<const Int8GemmKernel*> out;
  for (const Int8GemmKernel* main : {kernels::int8_kernel_avx2(), kernels::int8_kernel_avx512bw()}) {
    if (main == nullptr || main->kr != 2 || kernels::a_element_bytes(*main) != 2) continue;
    out.push_back(main);
    for (int m = 1; m < main->mr; ++m)
      if (const Int8GemmKernel* tail = kernels::int8_tail_kernel_for(*main, m)) out.push_back(tail);
  }
  return out;
}

constexpr int32_t kSumSentinel = 0x5A5A5A5A;

// One pack_a_rows call into a buffer with 64 guard bytes (0xC3) after the
// `bytes` it should fill and a sum buffer with 4 more entries than rows,
// all kSumSentinel; `what` describes the case.
struct PackRun {
  std::vector<unsigned char> out;
  std::vector<int32_t> sums;
  std::string what;
};
PackRun run_pack(const Int8GemmKernel& kern, const Tensor& a, ET type, int64_t rows, int64_t K, std::size_t bytes,
                 bool sums) {
  PackRun run{std::vector<unsigned char>(bytes + 64, 0xC3),
              std::vector<int32_t>(static_cast<std::size_t>(rows) + 4, kSumSentinel), ""};
  gemm::pack_a_rows(kern, a.raw(), type, rows, K, run.out.data(), sums ? run.sums.data() : nullptr);
  std::ostringstream what;
  what << kern.name << " K=" << K << " rows=" << rows << (type == ET::Int8 ? " int8" : " uint8")
       << (sums ? " with sums" : " without sums");
  run.what = what.str();
  return run;
}

// Nothing written past the packed `bytes`, the row sums as wanted (or the
// sentinel left when none were asked for), and no sum past the rows
// (want_sums has one per row).
void expect_nothing_stray(const PackRun& run, std::size_t bytes, const std::vector<int32_t>& want_sums, bool sums) {
  for (std::size_t j = bytes; j < run.out.size(); ++j)
    ASSERT_EQ(run.out[j], 0xC3) << run.what << ": byte " << j - bytes << " past the blocks written";
  for (std::size_t r = 0; r < want_sums.size(); ++r)
    EXPECT_EQ(run.sums[r], sums ? want_sums[r] : kSumSentinel) << run.what << " row " << r;
  for (std::size_t r = want_sums.size(); r < run.sums.size(); ++r)
    EXPECT_EQ(run.sums[r], kSumSentinel) << run.what << ": a sum past the rows written";
}

TEST(PackA, Int16PairsForEveryTileHeight) {
  const std::vector<const Int8GemmKernel*> kernels_to_check = int16_pair_kernels();
  if (kernels_to_check.empty()) GTEST_SKIP() << "no int16-pair kernel compiled into this build";
  std::mt19937 rng(616);
  int cases = 0;
  for (const Int8GemmKernel* kern : kernels_to_check)
    for (const int64_t K : {1, 2, 15, 16, 17, 31, 32, 33, 197})
      for (const int64_t rows : {int64_t{1}, int64_t{kern->mr - 1}, int64_t{kern->mr}, int64_t{2 * kern->mr + 1}})
        for (const ET type : {ET::Uint8, ET::Int8})
          for (const bool sums : {true, false}) {
            if (rows < 1) continue;
            const Tensor a = random_int8(rng, type, {rows, K}, 2);  // mostly the extremes: 255, -128
            const auto* src = static_cast<const unsigned char*>(a.raw());
            const unsigned char flip = type == ET::Int8 ? 0x80 : 0x00;
            const int mr = kern->mr;
            const int64_t kgroups = (K + 1) / 2, blocks = (rows + mr - 1) / mr;
            const std::size_t bytes = gemm::packed_a_bytes(*kern, rows, K);
            ASSERT_EQ(bytes, static_cast<std::size_t>(blocks * kgroups * mr * 2 * 2));
            std::vector<int16_t> want(bytes / 2, 0);
            std::vector<int32_t> want_sums(static_cast<std::size_t>(rows), 0);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t k = 0; k < K; ++k) {
                const int v = src[r * K + k] ^ flip;
                const int64_t b = r / mr, i = r % mr, g = k / 2;
                want[static_cast<std::size_t>(((b * kgroups + g) * mr + i) * 2 + k % 2)] = static_cast<int16_t>(v);
                want_sums[static_cast<std::size_t>(r)] += v;
              }
            const PackRun run = run_pack(*kern, a, type, rows, K, bytes, sums);
            std::vector<int16_t> got(bytes / 2);
            std::memcpy(got.data(), run.out.data(), bytes);
            EXPECT_EQ(got, want) << run.what;
            expect_nothing_stray(run, bytes, want_sums, sums);
            ++cases;
          }
  EXPECT_GE(cases, 6 * 9 * 3 * 2 * 2);
}

// Packing only, so it runs wherever the kernel was compiled: with the
// AVX-512 packer where the CPU has it, else the portable one.
TEST(PackA, SixtyFourByteGroupsOfTheAmxKernel) {
  const Int8GemmKernel* kern = kernels::int8_kernel_amx();
  if (kern == nullptr) GTEST_SKIP() << "the AMX kernel was not compiled into this build";
  ASSERT_EQ(kernels::a_kgroup(*kern), 64);
  std::mt19937 rng(6464);
  const int mr = kern->mr;
  for (const int64_t K : {1, 4, 63, 64, 65, 127, 128, 129, 200, 768})
    for (const int64_t rows : {int64_t{1}, int64_t{7}, int64_t{mr - 1}, int64_t{mr}, int64_t{2 * mr + 3}})
      for (const ET type : {ET::Uint8, ET::Int8})
        for (const bool sums : {true, false}) {
          const Tensor a = random_int8(rng, type, {rows, K}, 2);  // mostly the extremes: 255, -128
          const auto* src = static_cast<const unsigned char*>(a.raw());
          const unsigned char flip = type == ET::Int8 ? 0x80 : 0x00;
          const int64_t segments = (K + 63) / 64, blocks = (rows + mr - 1) / mr;
          const std::size_t bytes = gemm::packed_a_bytes(*kern, rows, K);
          ASSERT_EQ(bytes, static_cast<std::size_t>(blocks * segments * mr * 64));
          std::vector<unsigned char> want(bytes, 0);
          std::vector<int32_t> want_sums(static_cast<std::size_t>(rows), 0);
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t k = 0; k < K; ++k) {
              const int v = src[r * K + k] ^ flip;
              const int64_t b = r / mr, i = r % mr, g = k / 64;
              want[static_cast<std::size_t>(((b * segments + g) * mr + i) * 64 + k % 64)] = static_cast<unsigned char>(v);
              want_sums[static_cast<std::size_t>(r)] += v;
            }
          const PackRun run = run_pack(*kern, a, type, rows, K, bytes, sums);
          EXPECT_TRUE(std::equal(want.begin(), want.end(), run.out.begin())) << run.what;
          expect_nothing_stray(run, bytes, want_sums, sums);
        }
}

}  // namespace
}  // namespace qmatmul::testing

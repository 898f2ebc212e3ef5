// The last, partial row tile of a row block (src/gemm/driver.cpp): when its
// ISA has a small-M kernel for that many rows (kernels::int8_tail_kernel_for),
// the driver packs those rows in the small kernel's layout after the full
// blocks and runs that kernel on them, instead of the main kernel over
// zero-padded rows. Checked against the plain reference, bit for bit, with
// whatever ISA dispatch picks or QMATMUL_ISA forces (the isa_* suites run
// this one for each), for every tail height 1 .. MR-1 of that ISA's main
// kernel:
//
//  * alone (M = r; a small-M kernel may take it instead), and after two
//    full tiles (M = 2 MR + r), with B packed (PackedB) and raw (packed
//    inside the tasks when M > 16, not the raw-B path);
//  * in a row block of its own (M = 64 + r at K = 4096 with packed B: the
//    driver's row blocks then hold 64 rows on AVX-512 VNNI, 60 on AVX-VNNI,
//    30 on AVX2 and 32 on the portable path, so the last block is the tail
//    alone or a few full tiles and the tail);
//  * uint8 A with every zb' = 0 (full tiles read A in place, the tail is
//    packed) and int8 A (all packed); MatMulInteger whose tiles the kernel
//    finishes itself (per-tensor zero point of A: the tail kernel writes
//    straight into the output) and with per-row zero points (epilogue);
//    QLinearMatMul with per-row and per-column parameters; 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "kernels/dispatch.h"
#include "reference/reference.h"
#include "test_support.h"

namespace qmatmul::testing {
namespace {

namespace ref = qmatmul::reference;

void expect_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.type(), want.type()) << what;
  ASSERT_EQ(got.dims(), want.dims()) << what;
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.byte_size()), 0) << what;
}

Options threads(int n) {
  Options o;
  o.threads = n;
  o.min_macs_per_thread = 0;  // every thread, however small the problem
  return o;
}

// One shape, every variant of A's type, zero points, operator, B and threads.
void check_shape(std::mt19937& rng, int64_t m, int64_t k, int64_t n) {
  for (const ET at : {ET::Uint8, ET::Int8}) {
    const ET bt = ET::Int8;
    const Tensor a = random_int8(rng, at, {m, k}, 2), b = random_int8(rng, bt, {k, n}, 2);
    const PackedB packed = PackedB::pack(b);
    std::ostringstream shape;
    shape << "M=" << m << " K=" << k << " N=" << n << " A " << (at == ET::Uint8 ? "uint8" : "int8");
    // MatMulInteger, zb = 0: per-tensor za (tiles finished by the kernel),
    // then per-row za (the epilogue adds the row terms).
    Tensor zb(bt, {});
    std::memset(zb.raw(), 0, 1);
    for (const bool per_row : {false, true}) {
      const Tensor za = random_zero_point(rng, at, per_row ? Shape{m, 1} : Shape{});
      const Tensor want = ref::matmul_integer(a, b, za.view(), zb.view());
      for (int t : {1, 2}) {
        const std::string what = "MatMulInteger " + shape.str() + (per_row ? " za per row" : " za per tensor") +
                                 " threads=" + std::to_string(t);
        expect_bits(matmul_integer(a, b, za.view(), zb.view(), threads(t)), want, what);
        expect_bits(matmul_integer(a, packed, za.view(), zb.view(), threads(t)), want, "packed B " + what);
      }
    }
    // QLinearMatMul, parameters per row of A and per column of B, uint8 out.
    const Tensor a_scale = random_scale(rng, ET::Float32, {m, 1}, 0.05f);
    const Tensor a_zp = random_zero_point(rng, at, {m, 1});
    const Tensor b_scale = random_scale(rng, ET::Float32, {n}, 0.02f);
    const Tensor b_zp = random_zero_point(rng, bt, {n});
    // Output scale from the accumulator's typical size, so that results
    // spread over the output range and also saturate.
    const float typical = 0.05f * 0.02f * 128.0f * 128.0f * std::sqrt(static_cast<float>(k));
    const Tensor y_scale = random_scale(rng, ET::Float32, {}, typical / 48.0f);
    const Tensor y_zp = random_zero_point(rng, ET::Uint8, {});
    const Tensor want = ref::qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp);
    for (int t : {1, 2}) {
      const std::string what = "QLinearMatMul " + shape.str() + " threads=" + std::to_string(t);
      expect_bits(qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, threads(t)), want, what);
      expect_bits(qlinear_matmul(a, a_scale, a_zp, packed, b_scale, b_zp, y_scale, y_zp, threads(t)), want,
                  "packed B " + what);
    }
  }
}

TEST(DifferentialTailTiles, EveryTailHeightOfTheMainKernel) {
  const kernels::Int8GemmKernel& main_kernel = *kernels::dispatch().chosen->kernel;
  const int64_t mr = main_kernel.mr;
  std::mt19937 rng(1789);
  int with_tail_kernel = 0;
  for (int64_t r = 1; r < mr; ++r) {
    if (kernels::int8_tail_kernel_for(main_kernel, r) != nullptr) ++with_tail_kernel;
    check_shape(rng, r, 37, 70);  // the whole problem one tail tile (or a small-M kernel's)
    check_shape(rng, 2 * mr + r, 37, 70);
    check_shape(rng, 64 + r, 4096, 40);
  }
  // The ISAs with small-M kernels give every tail height one (AVX-512 VNNI:
  // 1-7 of 8; AVX2, AVX-VNNI and AVX-512 BW: 1-5 of 6); AMX the heights
  // 1-16 of its 32 (1-7 the AVX-512 VNNI kernels, 8-16 its 16-row tile),
  // the others run its tile padded; the portable path runs every tail
  // padded.
  if (main_kernel.isa == kernels::Isa::Amx) {
    EXPECT_EQ(with_tail_kernel, 16);
  } else if (main_kernel.isa == kernels::Isa::Avx512Vnni) {
    EXPECT_EQ(with_tail_kernel, 7);
  } else if (kernels::is_avx2_family(main_kernel.isa)) {
    EXPECT_EQ(with_tail_kernel, 5);
  } else {
    EXPECT_EQ(with_tail_kernel, 0);
  }
}

}  // namespace
}  // namespace qmatmul::testing

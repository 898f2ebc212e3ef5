// Tests of the x86 kernel table itself, beside the numeric battery of
// test_int8_kernels.cpp: the small-M getters of each ISA return the
// smallest tile with enough rows, sharing the main kernel's B packing, and
// each kernel has exactly the optional forms (in place, requantizing,
// half-width, two-panel) the driver relies on; and the int8 peak probe of
// `qmatmul bench` runs every vpdpbusd it counts.
#include <gtest/gtest.h>

#include <cstdint>

#include "cpu/cpu_features.h"
#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)

namespace qmatmul::kernels {
namespace {

// The small-M getter picks the smallest AVX-512 VNNI tile with enough rows
// (1 to 6, and 7 for tail tiles), sharing the main kernel's B packing.
TEST(Int8KernelSmallM, SharesMainPacking) {
  const Int8GemmKernel* main_kernel = int8_kernel_avx512vnni();
  if (main_kernel == nullptr) GTEST_SKIP() << "AVX-512 VNNI kernels not compiled into this build";
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(0), nullptr);
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(8), nullptr);
  ASSERT_NE(int8_kernel_avx512vnni_small_m_for(7), nullptr);
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(7)->mr, 7);  // a tail tile only: no two-panel form
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(7)->nr, main_kernel->nr);
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(6), int8_kernel_avx512vnni_small_m());
  // The main kernel reads A in place (the battery checks that form).
  EXPECT_NE(main_kernel->tile_a_in_place, nullptr);
  EXPECT_NE(main_kernel->tile_requant, nullptr);  // the driver's QLinearMatMul tiles
  EXPECT_NE(main_kernel->tile_half, nullptr);  // a last panel of at most 16 columns
  EXPECT_NE(main_kernel->tile_half_a_in_place, nullptr);
  for (int m = 1; m <= 6; ++m) {
    const Int8GemmKernel* k = int8_kernel_avx512vnni_small_m_for(m);
    ASSERT_NE(k, nullptr) << m;
    EXPECT_GE(k->mr, m);
    EXPECT_LE(k->mr, 6);
    EXPECT_LT(k->mr, main_kernel->mr);
    EXPECT_EQ(k->nr, main_kernel->nr);
    EXPECT_EQ(k->kr, main_kernel->kr);
    EXPECT_EQ(k->widening, main_kernel->widening);
    EXPECT_EQ(k->isa, Isa::Avx512Vnni);
    EXPECT_NE(k->tile_pair, nullptr) << m;  // the driver streams two panels at once with it
  }
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(1)->mr, 1);
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(2)->mr, 2);
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(4)->mr, 4);
  EXPECT_EQ(int8_kernel_avx512vnni_small_m_for(5)->mr, 5);
}

// The 16-column ISAs' small-M getters (AVX2, AVX-VNNI, and AVX-512 BW, whose
// zmm kernels read the AVX2 packing with B widened): 1, 2, 4 and 5 rows, the
// smallest with enough rows for m = 1..5, each sharing its main kernel's
// B packing; none above 5. The main kernel requantizes (the battery checks
// that form); the small ones, which never run a full tile, do not. The ymm
// main kernels also have the half-width form.
TEST(Int8KernelSmallM, YmmKernelsShareTheirMainPacking) {
  struct Family {
    const Int8GemmKernel* (*main)();
    const Int8GemmKernel* (*small)();
    const Int8GemmKernel* (*small_for)(int);
    bool small_tiles_requantize;  // the ymm tiles all have the requantizing form; the zmm ones only at 6 rows
    bool main_has_half;           // the ymm main tiles have the half-width form (8 columns); the zmm one not
  };
  int families = 0;
  for (const Family& f :
       {Family{int8_kernel_avx2, int8_kernel_avx2_small_m, int8_kernel_avx2_small_m_for, true, true},
        Family{int8_kernel_avxvnni, int8_kernel_avxvnni_small_m, int8_kernel_avxvnni_small_m_for, true, true},
        Family{int8_kernel_avx512bw, int8_kernel_avx512bw_small_m, int8_kernel_avx512bw_small_m_for, false,
               false}}) {
    const Int8GemmKernel* main_kernel = f.main();
    if (main_kernel == nullptr) continue;  // not compiled into this build
    ++families;
    EXPECT_NE(main_kernel->tile_requant, nullptr) << main_kernel->name;
    EXPECT_EQ(main_kernel->tile_a_in_place, nullptr) << main_kernel->name;
    EXPECT_EQ(main_kernel->tile_half != nullptr, f.main_has_half) << main_kernel->name;  // the battery checks it
    EXPECT_EQ(main_kernel->tile_half_a_in_place, nullptr) << main_kernel->name;
    EXPECT_EQ(f.small_for(0), nullptr);
    EXPECT_EQ(f.small_for(6), nullptr);
    EXPECT_EQ(f.small_for(4), f.small());
    const int want_mr[] = {1, 2, 3, 4, 5};
    for (int m = 1; m <= 5; ++m) {
      const Int8GemmKernel* k = f.small_for(m);
      ASSERT_NE(k, nullptr) << main_kernel->name << " m=" << m;
      EXPECT_EQ(k->mr, want_mr[m - 1]) << k->name;
      EXPECT_EQ(k->nr, main_kernel->nr) << k->name;
      EXPECT_EQ(k->kr, main_kernel->kr) << k->name;
      EXPECT_EQ(k->widening, main_kernel->widening) << k->name;
      EXPECT_EQ(k->isa, main_kernel->isa) << k->name;
      EXPECT_EQ(k->tile_requant != nullptr, f.small_tiles_requantize) << k->name;
    }
  }
  if (families == 0) GTEST_SKIP() << "no ymm kernels compiled into this build";
}

// qmatmul bench's int8 peak probe runs every vpdpbusd it counts: lane 0 of
// each of its 16 chains gains 1 x 1 four times per iteration, so the sums
// it returns are 64 per iteration, modulo 2^32 (the last case wraps).
TEST(VnniPeakProbe, SumsCountEveryInstruction) {
  const Int8PeakLoop loop = vnni_peak_loop_avx512vnni();
  if (loop == nullptr) GTEST_SKIP() << "the AVX-512 VNNI probe is not compiled into this build";
  if (!cpu::features().avx512vnni) GTEST_SKIP() << "this CPU does not run AVX-512 VNNI";
  for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}})
    EXPECT_EQ(loop(n), static_cast<uint32_t>(n * 64)) << n << " iterations";
  EXPECT_EQ(loop((int64_t{1} << 26) + 3), 192u);  // 64 * (2^26 + 3) = 2^32 + 192
}

// The AVX2 peak probes (for CPUs without AVX-512 VNNI) run every step they
// count: lane 0 of each of their 12 chains gains 4 per iteration (a
// vpmaddubsw pair of 1 x 1 summed by vpmaddwd with ones, or two vpmaddwd
// of 1 x 1 pairs), 48 per iteration in all.
TEST(Avx2PeakProbe, SumsCountEveryInstruction) {
  const Avx2PeakLoops loops = int8_peak_loops_avx2();
  if (loops.saturating == nullptr) GTEST_SKIP() << "the AVX2 probes are not compiled into this build";
  if (!cpu::features().avx2) GTEST_SKIP() << "this CPU does not run AVX2";
  ASSERT_NE(loops.exact, nullptr);
  for (const Int8PeakLoop loop : {loops.saturating, loops.exact}) {
    for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{300001}})
      EXPECT_EQ(loop(n), static_cast<uint32_t>(n * 48)) << n << " iterations";
  }
}

}  // namespace
}  // namespace qmatmul::kernels

#endif

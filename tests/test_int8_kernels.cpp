// The shared battery for every int8 microkernel: each kernel getter that was
// compiled in (non-null) and that this CPU can run is checked against a naive
// triple loop over the unpacked operands. The packed buffers are built here
// straight from the layout comment in kernels/int8_kernel.h, independently
// of the library's packing code:
//
//   packed A block: element (g, i, t) at ((g * MR) + i) * KR + t
//   packed B panel: element (g, j, t) at ((g * NR) + j) * KR + t
//
// as u8 / s8 bytes, or int16 as the kernel's `widening` says. Every packed buffer is
// the tail of an exact-size heap allocation, so a read past its end is caught
// under AddressSanitizer; C is prefilled with a sentinel so that stray or
// missing writes are caught without it. Every case also runs through each
// optional form a kernel has: two-panel (tile_pair), A in place (uint8 and
// int8 A), requantizing and half-width. The checks of the kernel table
// itself (getters, which forms each kernel has) are in
// test_int8_kernel_table.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "cpu/cpu_features.h"
#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

namespace qmatmul::kernels {
namespace {

struct KernelCase {
  std::string label;  // test-name suffix
  const Int8GemmKernel* (*get)();
};

void PrintTo(const KernelCase& k, std::ostream* os) { *os << k.label; }

// int8_kernel_avx512vnni_small_m_for lives in the x86 kernel files, which
// only x86 builds compile.
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#define QMATMUL_TEST_X86_EXTRA 1
const Int8GemmKernel* small_m1() { return int8_kernel_avx512vnni_small_m_for(1); }
const Int8GemmKernel* small_m2() { return int8_kernel_avx512vnni_small_m_for(2); }
const Int8GemmKernel* small_m3() { return int8_kernel_avx512vnni_small_m_for(3); }
const Int8GemmKernel* small_m4() { return int8_kernel_avx512vnni_small_m_for(4); }
const Int8GemmKernel* small_m5() { return int8_kernel_avx512vnni_small_m_for(5); }
const Int8GemmKernel* small_m7() { return int8_kernel_avx512vnni_small_m_for(7); }
const Int8GemmKernel* avx2_m1() { return int8_kernel_avx2_small_m_for(1); }
const Int8GemmKernel* avx2_m2() { return int8_kernel_avx2_small_m_for(2); }
const Int8GemmKernel* avx2_m3() { return int8_kernel_avx2_small_m_for(3); }
const Int8GemmKernel* avx2_m4() { return int8_kernel_avx2_small_m_for(4); }
const Int8GemmKernel* avx2_m5() { return int8_kernel_avx2_small_m_for(5); }
const Int8GemmKernel* avxvnni_m1() { return int8_kernel_avxvnni_small_m_for(1); }
const Int8GemmKernel* avxvnni_m2() { return int8_kernel_avxvnni_small_m_for(2); }
const Int8GemmKernel* avxvnni_m3() { return int8_kernel_avxvnni_small_m_for(3); }
const Int8GemmKernel* avxvnni_m4() { return int8_kernel_avxvnni_small_m_for(4); }
const Int8GemmKernel* avxvnni_m5() { return int8_kernel_avxvnni_small_m_for(5); }
const Int8GemmKernel* avx512bw_m1() { return int8_kernel_avx512bw_small_m_for(1); }
const Int8GemmKernel* avx512bw_m2() { return int8_kernel_avx512bw_small_m_for(2); }
const Int8GemmKernel* avx512bw_m3() { return int8_kernel_avx512bw_small_m_for(3); }
const Int8GemmKernel* avx512bw_m4() { return int8_kernel_avx512bw_small_m_for(4); }
const Int8GemmKernel* avx512bw_m5() { return int8_kernel_avx512bw_small_m_for(5); }
#endif

const KernelCase kKernels[] = {
    {"portable", int8_kernel_portable},
    {"avx2", int8_kernel_avx2},
    {"avxvnni", int8_kernel_avxvnni},
    {"avx512bw", int8_kernel_avx512bw},
    {"avx512vnni", int8_kernel_avx512vnni},
    {"avx512vnni_small_m", int8_kernel_avx512vnni_small_m},
    {"amx", int8_kernel_amx},
#ifdef QMATMUL_TEST_X86_EXTRA
    {"amx_16_rows", int8_kernel_amx_16_rows},
#endif
#ifdef QMATMUL_TEST_X86_EXTRA
    {"avx512vnni_m1", small_m1},
    {"avx512vnni_m2", small_m2},
    {"avx512vnni_m3", small_m3},
    {"avx512vnni_m4", small_m4},
    {"avx512vnni_m5", small_m5},
    {"avx512vnni_m7", small_m7},
    {"avx2_m1", avx2_m1},
    {"avx2_m2", avx2_m2},
    {"avx2_m3", avx2_m3},
    {"avx2_m4", avx2_m4},
    {"avx2_m5", avx2_m5},
    {"avxvnni_m1", avxvnni_m1},
    {"avxvnni_m2", avxvnni_m2},
    {"avxvnni_m3", avxvnni_m3},
    {"avxvnni_m4", avxvnni_m4},
    {"avxvnni_m5", avxvnni_m5},
    {"avx512bw_m1", avx512bw_m1},
    {"avx512bw_m2", avx512bw_m2},
    {"avx512bw_m3", avx512bw_m3},
    {"avx512bw_m4", avx512bw_m4},
    {"avx512bw_m5", avx512bw_m5},
#endif
};

const char* isa_label(Isa isa) {
  switch (isa) {
    case Isa::Portable: return "portable";
    case Isa::Avx2: return "avx2";
    case Isa::AvxVnni: return "avxvnni";
    case Isa::Avx512Vnni: return "avx512vnni";
    case Isa::Avx512Bw: return "avx512bw";
    case Isa::Amx: return "amx";
  }
  return "?";
}

// Can this CPU (and OS) execute the kernel's instructions? libgcc's
// __builtin_cpu_supports also checks that the OS saves ymm / zmm state.
bool cpu_runs(Isa isa) {
  switch (isa) {
    case Isa::Portable: return true;
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::AvxVnni: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni");
    case Isa::Avx512Bw:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw");
    case Isa::Avx512Vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vnni");
    case Isa::Amx:  // the tile state must also be granted to the process: the library's detection
      return cpu::features().amx_int8;
  }
  return false;
}

// Unpacked operands of one tile: A is MR x K (0..255), B is K x NR
// (-128..127), K = kgroups * KR.
struct Operands {
  int64_t k = 0;
  std::vector<int32_t> a, b;
};

// A packed operand at the very end of an exact-size allocation, `offset`
// bytes past its start (offset 1 makes every load misaligned).
struct PackedBuffer {
  std::vector<uint8_t> storage;
  size_t offset = 0;
  const void* data() const { return storage.data() + offset; }
};

void put(PackedBuffer& buf, size_t index, int32_t value, int element_bytes) {
  uint8_t* base = buf.storage.data() + buf.offset;
  if (element_bytes == 2) {
    const auto v = static_cast<int16_t>(value);
    std::memcpy(base + index * sizeof v, &v, sizeof v);
  } else {
    base[index] = static_cast<uint8_t>(value);  // u8 as is, s8 as two's complement
  }
}

// rows x (kgroups * KR) values `src` (row r, k at src[r * K + k] when
// row_major, else src[k * rows + r]) packed as element (g, r, t) at
// ((g * rows) + r) * KR + t, each as element_bytes (1, or 2: int16). With
// k_valid >= 0, src holds k_valid values a row (row-major only) and the
// k-groups past them are zero padding (A of a kernel with its own, wider
// A k-group: a_kr).
PackedBuffer pack(const std::vector<int32_t>& src, bool row_major, int rows, int64_t kgroups,
                  int kr, int element_bytes, size_t offset, int64_t k_valid = -1) {
  const int64_t k = k_valid >= 0 ? k_valid : kgroups * kr;
  const size_t count = static_cast<size_t>(kgroups * kr * rows);
  PackedBuffer buf;
  buf.offset = offset;
  buf.storage.assign(offset + count * static_cast<size_t>(element_bytes), 0xEE);
  for (int64_t g = 0; g < kgroups; ++g)
    for (int r = 0; r < rows; ++r)
      for (int t = 0; t < kr; ++t) {
        const int64_t kk = g * kr + t;
        if (kk >= k) {
          put(buf, static_cast<size_t>((g * rows + r) * kr + t), 0, element_bytes);
          continue;
        }
        const int32_t v = row_major ? src[static_cast<size_t>(r * k + kk)]
                                    : src[static_cast<size_t>(kk * rows + r)];
        put(buf, static_cast<size_t>((g * rows + r) * kr + t), v, element_bytes);
      }
  return buf;
}

// The oracle: int64 sums reduced modulo 2^32, as the contract specifies.
std::vector<int32_t> naive(const Operands& op, int mr, int nr) {
  std::vector<int32_t> c(static_cast<size_t>(mr * nr));
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      int64_t s = 0;
      for (int64_t kk = 0; kk < op.k; ++kk)
        s += int64_t{op.a[static_cast<size_t>(i * op.k + kk)]} *
             op.b[static_cast<size_t>(kk * nr + j)];
      c[static_cast<size_t>(i * nr + j)] = static_cast<int32_t>(static_cast<uint32_t>(s));
    }
  return c;
}

constexpr int32_t kSentinel = 0x5A5A5A5A;

class Int8KernelBattery : public ::testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    kernel_ = GetParam().get();
    if (kernel_ == nullptr) GTEST_SKIP() << GetParam().label << ": not compiled into this build";
    if (!cpu_runs(kernel_->isa))
      GTEST_SKIP() << kernel_->name << ": this CPU cannot run " << isa_label(kernel_->isa);
    begin_tile_calls(*kernel_);  // nothing in a test case runs other kernels between its tile calls
  }

  Operands make(int64_t kgroups) const {
    Operands op;
    op.k = kgroups * kernel_->kr;
    op.a.assign(static_cast<size_t>(kernel_->mr * op.k), 0);
    op.b.assign(static_cast<size_t>(op.k * kernel_->nr), 0);
    return op;
  }

  Operands random_operands(int64_t kgroups, uint32_t seed) const {
    Operands op = make(kgroups);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> ua(0, 255), sb(-128, 127);
    for (auto& v : op.a) v = ua(rng);
    for (auto& v : op.b) v = sb(rng);
    return op;
  }

  // Packs `op`, runs the kernel with row stride `ldc` into a sentinel-filled
  // C and checks the tile against the oracle and every other element of C
  // against the sentinel. C ends exactly after the tile's last element
  // (plus `guard` sentinel elements), so ASan sees any write beyond. Runs
  // three times: plain; with a prefetch region, a hint that must not change
  // any result; and with a col_init of extreme values, added wrapping.
  void check(const Operands& op, int64_t ldc, size_t offset = 0, size_t guard = 0) const {
    const int mr = kernel_->mr, nr = kernel_->nr, kr = kernel_->kr;
    ASSERT_GE(ldc, nr);
    ASSERT_EQ(op.k % kr, 0);
    const int64_t kgroups = op.k / kr;
    const int akr = a_kgroup(*kernel_);
    const PackedBuffer pa =
        pack(op.a, true, mr, (op.k + akr - 1) / akr, akr, a_element_bytes(*kernel_), offset, op.k);
    const PackedBuffer pb = pack(op.b, false, nr, kgroups, kr, b_element_bytes(*kernel_), offset);
    const std::vector<unsigned char> region(static_cast<size_t>(kgroups * kPrefetchBytesPerKgroup) + 1, 0x5a);
    std::vector<int32_t> init(static_cast<size_t>(nr));
    for (int j = 0; j < nr; ++j) init[static_cast<size_t>(j)] = j % 3 == 0 ? INT32_MAX : j % 3 == 1 ? INT32_MIN : -7 * j;
    {
      SCOPED_TRACE("plain");
      check_run(op, kgroups, pa, pb, nullptr, ldc, guard, nullptr);
    }
    {
      SCOPED_TRACE("with a prefetch region");
      check_run(op, kgroups, pa, pb, nullptr, ldc, guard, region.data());
    }
    {
      SCOPED_TRACE("with a col_init");
      check_run(op, kgroups, pa, pb, init.data(), ldc, guard, nullptr);
    }
    if (kernel_->tile_pair != nullptr) check_pair(op, ldc, offset, guard);
    if (kernel_->tile_a_in_place != nullptr) check_a_in_place(op, ldc, offset, guard, pb, region.data(), init.data());
    if (kernel_->tile_requant != nullptr) check_requant(op, offset, pa, pb, region.data());
    if (kernel_->tile_half != nullptr) check_half(op, ldc, offset, guard, pa, pb, region.data(), init.data());
  }

  // The half-width forms: the first NR/2 columns of the tile, from the same
  // packed panel, written as MR x NR/2 values; C's other elements keep the
  // sentinel. Packed A and A in place (row stride K + 5, the allocation
  // ending after the last row), plain, with a prefetch region and with a
  // col_init.
  void check_half(const Operands& op, int64_t ldc, size_t offset, size_t guard, const PackedBuffer& pa,
                  const PackedBuffer& pb, const void* region, const int32_t* init) const {
    const int mr = kernel_->mr, half = kernel_->nr / 2;
    const int64_t kgroups = op.k / kernel_->kr, lda = op.k + 5;
    Operands left = op;  // B's first NR/2 columns
    left.b.assign(static_cast<size_t>(op.k * half), 0);
    for (int64_t kk = 0; kk < op.k; ++kk)
      for (int j = 0; j < half; ++j)
        left.b[static_cast<size_t>(kk * half + j)] = op.b[static_cast<size_t>(kk * kernel_->nr + j)];
    const std::vector<unsigned char> a_u8 = rows_in_place(op, lda, offset, 0x00);
    const std::vector<unsigned char> a_s8 = rows_in_place(op, lda, offset, 0x80);
    for (const int a_form : {0, 1, 2})  // packed A, uint8 A in place, int8 A in place
      for (int run = 0; run < 3; ++run) {
        const bool in_place = a_form != 0;
        if (in_place && kernel_->tile_half_a_in_place == nullptr) continue;
        if (a_form == 2 && !kernel_->a_in_place_int8) continue;
        SCOPED_TRACE(std::string("half width, ") +
                     (a_form == 0 ? "packed A" : a_form == 1 ? "uint8 A in place" : "int8 A in place") +
                     (run == 1 ? ", with a prefetch region" : run == 2 ? ", with a col_init" : ""));
        const int32_t* col_init = run == 2 ? init : nullptr;
        const void* prefetch = run == 1 ? region : nullptr;
        std::vector<int32_t> c(static_cast<size_t>((mr - 1) * ldc + half) + guard, kSentinel);
        if (in_place)
          kernel_->tile_half_a_in_place(kgroups, (a_form == 2 ? a_s8 : a_u8).data() + offset, lda,
                                        a_form == 2 ? 0x80 : 0x00, pb.data(), col_init, c.data(), ldc, prefetch);
        else
          kernel_->tile_half(kgroups, pa.data(), pb.data(), col_init, c.data(), ldc, prefetch);
        expect_tile(c, ldc, naive_plus(left, half, col_init), half, kgroups);
      }
  }

  // The requantizing form: the oracle's sums plus a col_init, requantized
  // here as SEMANTICS.md §4 writes it (v = double(C) * double(m) +
  // double(zp), two roundings, then round half to even and saturate), into
  // bytes with row stride NR + 5 in a sentinel-filled buffer. Packed A and,
  // where the kernel reads A in place, A in place (row stride K + 3), with
  // and without a prefetch region, uint8 and int8 output, multipliers all at
  // most 0.5 (bounded) or some of them 3 (not), and the single-FMA form
  // (exact_product) whenever every |C| < 2^29, where the contract allows it.
  void check_requant(const Operands& op, size_t offset, const PackedBuffer& pa, const PackedBuffer& pb,
                     const void* region) const {
    const int mr = kernel_->mr, nr = kernel_->nr;
    const int64_t kgroups = op.k / kernel_->kr, lda = op.k + 3, ldy = nr + 5;
    std::vector<int32_t> init(static_cast<size_t>(nr));
    for (int j = 0; j < nr; ++j) init[static_cast<size_t>(j)] = (j % 5 - 2) * 100003;
    const std::vector<int32_t> sums = naive_plus(op, nr, init.data());
    bool below_2_29 = true;
    for (const int32_t c : sums) below_2_29 = below_2_29 && c > -(1 << 29) && c < (1 << 29);
    const std::vector<unsigned char> a_u8 = rows_in_place(op, lda, offset, 0x00);
    const std::vector<unsigned char> a_s8 = rows_in_place(op, lda, offset, 0x80);
    const double typical = 9400.0 * std::sqrt(static_cast<double>(op.k)) + 1.0;  // |C| of random operands
    std::vector<double> m(static_cast<size_t>(nr)), zp(static_cast<size_t>(nr));
    for (const bool bounded : {true, false})
      for (const bool u8 : {true, false})
        for (const bool exact : {false, true}) {
          if (exact && !below_2_29) continue;
          for (int j = 0; j < nr; ++j) {
            const float mj = !bounded && j % 3 == 0 ? 3.0f : static_cast<float>(48.0 * (1.0 + j / 32.0) / typical);
            m[static_cast<size_t>(j)] = static_cast<double>(std::min(mj, bounded ? 0.5f : mj));
            zp[static_cast<size_t>(j)] = u8 ? (j * 37) % 256 : (j * 37) % 256 - 128;
          }
          const RequantParams rq{m.data(), zp.data(), u8, bounded, exact};
          for (const int a_form : {0, 1, 2})  // packed A, uint8 A in place, int8 A in place
            for (const void* prefetch : {static_cast<const void*>(nullptr), region}) {
              const bool in_place = a_form != 0;
              if (in_place && kernel_->tile_a_in_place == nullptr) continue;  // packed A only (the ymm kernels)
              if (a_form == 2 && !kernel_->a_in_place_int8) continue;      // uint8 A only (the AMX kernels)
              const std::vector<unsigned char>& a = a_form == 2 ? a_s8 : a_u8;
              SCOPED_TRACE(std::string("requantizing form, ") +
                           (a_form == 0 ? "packed A" : a_form == 1 ? "uint8 A in place" : "int8 A in place") +
                           (prefetch ? ", a prefetch region" : "") + (u8 ? ", uint8" : ", int8") +
                           (bounded ? ", bounded" : ", multipliers of 3") + (exact ? ", one FMA" : ""));
              std::vector<unsigned char> y(static_cast<size_t>((mr - 1) * ldy + nr) + 3, 0xA5);
              kernel_->tile_requant(kgroups, in_place ? static_cast<const void*>(a.data() + offset) : pa.data(),
                                    in_place ? lda : 0, a_form == 2 ? 0x80 : 0x00, pb.data(), init.data(), rq,
                                    y.data(), ldy, prefetch);
              int bad = 0;
              for (size_t idx = 0; idx < y.size(); ++idx) {
                const int64_t i = static_cast<int64_t>(idx) / ldy, j = static_cast<int64_t>(idx) % ldy;
                int want = 0xA5;
                if (i < mr && j < nr) {
                  const double c = sums[static_cast<size_t>(i * nr + j)];
                  double v = c * m[static_cast<size_t>(j)];
                  v = v + zp[static_cast<size_t>(j)];
                  v = std::nearbyint(std::clamp(v, u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0));
                  want = static_cast<unsigned char>(static_cast<int>(v));
                }
                if (y[idx] != want && ++bad <= 8)
                  ADD_FAILURE() << kernel_->name << " kgroups=" << kgroups << " y[" << i << "][" << j
                                << "] = " << int(y[idx]) << ", want " << want;
              }
              EXPECT_EQ(bad, 0) << kernel_->name << ": " << bad << " wrong bytes";
            }
        }
  }

  // The form reading A in place: A row-major (u8) with a row stride of K
  // itself and of K + 13 (the 13 bytes after each row filled with 0xEE),
  // the allocation ending right after the last row's K bytes, so ASan sees
  // any read past it. Plain, with a prefetch region and with a col_init.
  void check_a_in_place(const Operands& op, int64_t ldc, size_t offset, size_t guard, const PackedBuffer& pb,
                        const void* region, const int32_t* init) const {
    const int mr = kernel_->mr, nr = kernel_->nr;
    ASSERT_EQ(kernel_->widening, Widening::Bytes);
    const int64_t kgroups = op.k / kernel_->kr;
    for (const int64_t pad : {int64_t{0}, int64_t{13}})
      for (const uint8_t flip : {uint8_t{0x00}, uint8_t{0x80}}) {
        if (flip != 0 && !kernel_->a_in_place_int8) continue;  // uint8 A only (the AMX kernels)
        const int64_t lda = op.k + pad;
        const std::vector<unsigned char> a = rows_in_place(op, lda, offset, flip);
        for (int run = 0; run < 3; ++run) {
          SCOPED_TRACE(std::string(flip ? "int8" : "uint8") + " A in place, lda = K + " + std::to_string(pad) +
                       (run == 1 ? ", with a prefetch region" : run == 2 ? ", with a col_init" : ""));
          const int32_t* col_init = run == 2 ? init : nullptr;
          std::vector<int32_t> c(static_cast<size_t>((mr - 1) * ldc + nr) + guard, kSentinel);
          kernel_->tile_a_in_place(kgroups, a.data() + offset, lda, flip, pb.data(), col_init, c.data(), ldc,
                                   run == 1 ? region : nullptr);
          expect_tile(c, ldc, naive_plus(op, nr, col_init), nr, kgroups);
        }
      }
  }

  // The two-panel form: panel 0 holds op's B, panel 1 the same columns in
  // reverse order and starts kPairGap bytes after panel 0 ends (so the
  // stride is not the panel size); C gets both, side by side, with row
  // stride ldc + NR. Plain and with a col_init of 2 NR extreme values.
  void check_pair(const Operands& op, int64_t ldc, size_t offset, size_t guard) const {
    constexpr size_t kPairGap = 192;
    const int mr = kernel_->mr, nr = kernel_->nr, kr = kernel_->kr;
    const int64_t kgroups = op.k / kr;
    Operands wide = op;  // K x 2NR: [B | B with its columns reversed]
    wide.b.assign(static_cast<size_t>(op.k * 2 * nr), 0);
    std::vector<int32_t> reversed(op.b.size());
    for (int64_t kk = 0; kk < op.k; ++kk)
      for (int j = 0; j < nr; ++j) {
        const int32_t v = op.b[static_cast<size_t>(kk * nr + j)];
        reversed[static_cast<size_t>(kk * nr + (nr - 1 - j))] = v;
        wide.b[static_cast<size_t>(kk * 2 * nr + j)] = v;
        wide.b[static_cast<size_t>(kk * 2 * nr + 2 * nr - 1 - j)] = v;
      }
    const PackedBuffer pa = pack(op.a, true, mr, kgroups, kr, a_element_bytes(*kernel_), offset);
    const PackedBuffer p0 = pack(op.b, false, nr, kgroups, kr, b_element_bytes(*kernel_), 0);
    const PackedBuffer p1 = pack(reversed, false, nr, kgroups, kr, b_element_bytes(*kernel_), 0);
    PackedBuffer pb;  // panel 0, the gap, panel 1: ending the allocation
    pb.offset = offset;
    pb.storage.assign(offset + p0.storage.size() + kPairGap + p1.storage.size(), 0xEE);
    if (!p0.storage.empty()) {  // empty with no k-groups
      std::memcpy(pb.storage.data() + offset, p0.storage.data(), p0.storage.size());
      std::memcpy(pb.storage.data() + offset + p0.storage.size() + kPairGap, p1.storage.data(), p1.storage.size());
    }
    const auto stride = static_cast<int64_t>(p0.storage.size() + kPairGap);
    std::vector<int32_t> init(static_cast<size_t>(2 * nr));
    for (int j = 0; j < 2 * nr; ++j)
      init[static_cast<size_t>(j)] = j % 3 == 0 ? INT32_MIN : j % 3 == 1 ? INT32_MAX : 5 * j - 100;
    for (const int32_t* col_init : {static_cast<const int32_t*>(nullptr), static_cast<const int32_t*>(init.data())}) {
      SCOPED_TRACE(col_init ? "two panels, with a col_init" : "two panels");
      const int64_t ldc2 = ldc + nr;
      std::vector<int32_t> c(static_cast<size_t>((mr - 1) * ldc2 + 2 * nr) + guard, kSentinel);
      kernel_->tile_pair(kgroups, pa.data(), pb.data(), stride, col_init, c.data(), ldc2);
      expect_tile(c, ldc2, naive_plus(wide, 2 * nr, col_init), 2 * nr, kgroups);
    }
  }

  // A's MR rows as a kernel reads them in place: row stride lda (the bytes
  // between rows 0xEE), `offset` bytes into the buffer, which ends right
  // after the last row's K bytes (so ASan sees any read past it), each
  // byte a' xor flip: uint8 A (flip 0) or the int8 A whose shift is a'.
  std::vector<unsigned char> rows_in_place(const Operands& op, int64_t lda, size_t offset, uint8_t flip) const {
    std::vector<unsigned char> a(offset + static_cast<size_t>((kernel_->mr - 1) * lda + op.k), 0xEE);
    for (int i = 0; i < kernel_->mr; ++i)
      for (int64_t kk = 0; kk < op.k; ++kk)
        a[offset + static_cast<size_t>(i * lda + kk)] =
            static_cast<unsigned char>(op.a[static_cast<size_t>(i * op.k + kk)] ^ flip);
    return a;
  }

  // The oracle's tile (mr x width), plus col_init when given (wrapping).
  std::vector<int32_t> naive_plus(const Operands& op, int width, const int32_t* col_init) const {
    std::vector<int32_t> want = naive(op, kernel_->mr, width);
    if (col_init != nullptr)
      for (int i = 0; i < kernel_->mr; ++i)
        for (int j = 0; j < width; ++j) {
          int32_t& w = want[static_cast<size_t>(i * width + j)];
          w = static_cast<int32_t>(static_cast<uint32_t>(w) + static_cast<uint32_t>(col_init[j]));
        }
    return want;
  }

  // C (row stride ldc) holds `want` (mr x width) in its tile and the
  // sentinel everywhere else.
  void expect_tile(const std::vector<int32_t>& c, int64_t ldc, const std::vector<int32_t>& want, int width,
                   int64_t kgroups) const {
    int bad = 0;
    for (size_t idx = 0; idx < c.size(); ++idx) {
      const int64_t i = static_cast<int64_t>(idx) / ldc, j = static_cast<int64_t>(idx) % ldc;
      const bool in_tile = i < kernel_->mr && j < width;
      const int32_t expect = in_tile ? want[static_cast<size_t>(i * width + j)] : kSentinel;
      if (c[idx] != expect && ++bad <= 8)
        ADD_FAILURE() << kernel_->name << " kgroups=" << kgroups << " ldc=" << ldc
                      << (in_tile ? " C[" : " outside tile at [") << i << "][" << j
                      << "] = " << c[idx] << ", want " << expect;
    }
    EXPECT_EQ(bad, 0) << kernel_->name << ": " << bad << " wrong elements";
  }

  void check_run(const Operands& op, int64_t kgroups, const PackedBuffer& pa, const PackedBuffer& pb,
                 const int32_t* col_init, int64_t ldc, size_t guard, const void* prefetch) const {
    const int mr = kernel_->mr, nr = kernel_->nr;
    std::vector<int32_t> c(static_cast<size_t>((mr - 1) * ldc + nr) + guard, kSentinel);
    kernel_->tile(kgroups, pa.data(), pb.data(), col_init, c.data(), ldc, prefetch);
    expect_tile(c, ldc, naive_plus(op, nr, col_init), nr, kgroups);
  }

  const Int8GemmKernel* kernel_ = nullptr;
};

TEST_P(Int8KernelBattery, Descriptor) {
  EXPECT_NE(kernel_->name, nullptr);
  const std::string name = kernel_->name;
  const std::string suffix = std::string("__") + isa_label(kernel_->isa);
  EXPECT_TRUE(name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      << name << " should end in " << suffix;
  const std::string tile = std::to_string(kernel_->mr) + "x" + std::to_string(kernel_->nr) + "c" +
                           std::to_string(kernel_->kr);
  EXPECT_NE(name.find(tile), std::string::npos) << name << " should name its tile " << tile;
  EXPECT_GE(kernel_->mr, 1);
  EXPECT_GE(kernel_->nr, 1);
  EXPECT_TRUE(kernel_->kr == 1 || kernel_->kr == 2 || kernel_->kr == 4) << kernel_->kr;
  EXPECT_NE(kernel_->tile, nullptr);
}

TEST_P(Int8KernelBattery, ZeroKGroupsWritesZeros) {
  check(make(0), kernel_->nr);
  check(make(0), kernel_->nr + 3);
}

TEST_P(Int8KernelBattery, RandomKGroups) {
  for (int64_t kg : {1, 2, 3, 7, 64, 1000}) {
    SCOPED_TRACE("kgroups=" + std::to_string(kg));
    check(random_operands(kg, static_cast<uint32_t>(kg * 7919 + 1)), kernel_->nr);
  }
}

// Every remainder of any k unrolling (the small-M kernels unroll by up to 4;
// the AMX kernel steps 16 k-groups at a time).
TEST_P(Int8KernelBattery, KGroupsSweep) {
  for (int64_t kg = 1; kg <= 35; ++kg) {
    SCOPED_TRACE("kgroups=" + std::to_string(kg));
    check(random_operands(kg, static_cast<uint32_t>(100 + kg)), kernel_->nr);
  }
}

TEST_P(Int8KernelBattery, FullRangeExtremes) {
  for (int64_t kg : {1, 3, 64, 257}) {
    SCOPED_TRACE("kgroups=" + std::to_string(kg));
    Operands op = make(kg);
    for (auto& v : op.a) v = 255;
    for (auto& v : op.b) v = -128;
    check(op, kernel_->nr);  // most negative products everywhere
    for (auto& v : op.b) v = 127;
    check(op, kernel_->nr);  // most positive products everywhere
    std::mt19937 rng(static_cast<uint32_t>(kg));
    for (auto& v : op.a) v = (rng() & 1) ? 255 : 0;
    for (auto& v : op.b) v = (rng() & 1) ? 127 : -128;
    check(op, kernel_->nr);  // mixes of the extremes
  }
}

// 255 * 127 * K and 255 * -128 * K leave int32 once K > 66311 (and wrap past
// 2^32 beyond 131586): sums must wrap modulo 2^32.
TEST_P(Int8KernelBattery, Int32WrapAround) {
  const int64_t kg = 140000 / kernel_->kr;
  Operands op = make(kg);
  for (auto& v : op.a) v = 255;
  for (auto& v : op.b) v = 127;
  check(op, kernel_->nr);
  for (auto& v : op.b) v = -128;
  check(op, kernel_->nr);
  // Rows and columns that wrap by different amounts (A' stays within 0..255
  // for the 32 rows of the AMX tile).
  for (int i = 0; i < kernel_->mr; ++i)
    for (int64_t kk = 0; kk < op.k; ++kk) op.a[static_cast<size_t>(i * op.k + kk)] = 255 - 9 * (i % 28);
  for (int64_t kk = 0; kk < op.k; ++kk)
    for (int j = 0; j < kernel_->nr; ++j)
      op.b[static_cast<size_t>(kk * kernel_->nr + j)] = (j % 2) ? 127 - j : -128 + j;
  check(op, kernel_->nr);
}

TEST_P(Int8KernelBattery, RandomLongK) {
  check(random_operands(40000 / kernel_->kr, 77), kernel_->nr);
}

// Row stride beyond NR: the elements past column NR of each row (and, with a
// guard, past the tile) must keep their previous contents.
TEST_P(Int8KernelBattery, LdcLargerThanNr) {
  for (int64_t extra : {1, 5, 16, 61}) {
    SCOPED_TRACE("ldc=nr+" + std::to_string(extra));
    check(random_operands(9, static_cast<uint32_t>(extra)), kernel_->nr + extra, 0, 7);
  }
}

// Packed operands off every vector alignment: one element of A' (a byte, or
// an int16 when widened) past an allocation's start.
TEST_P(Int8KernelBattery, UnalignedOperands) {
  const size_t offset = static_cast<size_t>(a_element_bytes(*kernel_));
  for (int64_t kg : {1, 5, 33}) {
    SCOPED_TRACE("kgroups=" + std::to_string(kg));
    check(random_operands(kg, static_cast<uint32_t>(kg + 31)), kernel_->nr, offset);
  }
}

// Element-distinct operands: a layout mix-up (rows, columns, t) shows here.
TEST_P(Int8KernelBattery, DistinctElements) {
  const int64_t kg = 5;
  Operands op = make(kg);
  for (int i = 0; i < kernel_->mr; ++i)
    for (int64_t kk = 0; kk < op.k; ++kk)
      op.a[static_cast<size_t>(i * op.k + kk)] = static_cast<int32_t>((i * 37 + kk * 11 + 1) % 256);
  for (int64_t kk = 0; kk < op.k; ++kk)
    for (int j = 0; j < kernel_->nr; ++j)
      op.b[static_cast<size_t>(kk * kernel_->nr + j)] = static_cast<int32_t>((kk * 13 + j * 7) % 256) - 128;
  check(op, kernel_->nr);
  // One-hot: C[i][j] = A[i][k0] * B[k0][j] for a single nonzero k.
  for (int64_t k0 : {int64_t{0}, op.k / 2 + 1, op.k - 1}) {
    Operands one = make(kg);
    for (int i = 0; i < kernel_->mr; ++i) one.a[static_cast<size_t>(i * one.k + k0)] = 200 + i;
    for (int j = 0; j < kernel_->nr; ++j) one.b[static_cast<size_t>(k0 * kernel_->nr + j)] = j - 64;
    check(one, kernel_->nr);
  }
}

INSTANTIATE_TEST_SUITE_P(Int8Kernel, Int8KernelBattery, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<KernelCase>& info) { return info.param.label; });


}  // namespace
}  // namespace qmatmul::kernels

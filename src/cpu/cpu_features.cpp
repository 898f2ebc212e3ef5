// CPUID / XGETBV based feature detection for x86-64; on other architectures
// every SIMD feature reads as absent and only the portable path is used.
#include "cpu/cpu_features.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define QMATMUL_X86 1
#endif
#if defined(__linux__) && QMATMUL_X86
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace qmatmul::cpu {
namespace {

#if QMATMUL_X86
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.a, r.b, r.c, r.d);
  return r;
}

// Linux hands out the AMX tile state only to a process that asks for it
// (an AMX instruction otherwise faults): true when granted.
bool request_amx_tile_state() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

Features detect() {
  Features f;
  const unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return f;
  const Regs l1 = cpuid(1, 0);
  const bool osxsave = (l1.c >> 27) & 1;
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;      // XMM and YMM state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;    // plus opmask and ZMM state
  // Display family and model: the extended fields count when the base
  // family is 15 (family) or 6 / 15 (model).
  const int base_family = static_cast<int>((l1.a >> 8) & 0xF), base_model = static_cast<int>((l1.a >> 4) & 0xF);
  f.family = base_family == 0xF ? base_family + static_cast<int>((l1.a >> 20) & 0xFF) : base_family;
  f.model = base_family == 0x6 || base_family == 0xF ? base_model + (static_cast<int>((l1.a >> 16) & 0xF) << 4)
                                                     : base_model;
  const Regs l0 = cpuid(0, 0);
  char vendor[13] = {};
  std::memcpy(vendor, &l0.b, 4);
  std::memcpy(vendor + 4, &l0.d, 4);
  std::memcpy(vendor + 8, &l0.c, 4);
  const bool amd = std::strcmp(vendor, "AuthenticAMD") == 0, hygon = std::strcmp(vendor, "HygonGenuine") == 0;
  f.splits_256 = (amd && f.family == 0x17 && f.model < 0x30) || (hygon && f.family == 0x18);
  f.sse42 = (l1.c >> 20) & 1;
  const bool fma = (l1.c >> 12) & 1;
  f.f16c = os_ymm && ((l1.c >> 29) & 1);
  if (max_leaf >= 7) {
    const Regs l7 = cpuid(7, 0);
    const Regs l7s1 = cpuid(7, 1);
    const bool avx2 = (l7.b >> 5) & 1;
    const bool avx512f = (l7.b >> 16) & 1, avx512dq = (l7.b >> 17) & 1;
    const bool avx512bw = (l7.b >> 30) & 1, avx512vl = (l7.b >> 31) & 1;
    const bool avx512vnni = (l7.c >> 11) & 1;
    f.avx2 = os_ymm && avx2 && fma;
    f.avxvnni = f.avx2 && ((l7s1.a >> 4) & 1);
    f.avx512bw = os_zmm && f.avx2 && avx512f && avx512bw;
    f.avx512vnni = os_zmm && f.avx2 && avx512f && avx512dq && avx512bw && avx512vl && avx512vnni;
    f.avx512bf16 = f.avx512vnni && ((l7s1.a >> 5) & 1);
    const bool amx_tile = (l7.d >> 24) & 1, amx_int8 = (l7.d >> 25) & 1;
    const bool os_tiles = (xcr0 & 0x60000) == 0x60000;  // XTILECFG and XTILEDATA
    f.amx_int8 = f.avx512vnni && amx_tile && amx_int8 && os_tiles && request_amx_tile_state();
  }
  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      const Regs r = cpuid(0x80000002u + i, 0);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    f.brand = brand;
    while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
  }
  return f;
}
#else
Features detect() { return {}; }
#endif

}  // namespace

const Features& features() {
  static const Features detected = detect();
  return detected;
}

}  // namespace qmatmul::cpu

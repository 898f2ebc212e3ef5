// What the running CPU can execute ("can it run"), read once from CPUID and
// XGETBV (the OS must also save the wide registers). Kept apart from "was it
// compiled" (the kernel getters) so dispatch can explain both.
#pragma once

#include <string>

namespace qmatmul::cpu {

struct Features {
  bool sse42 = false;
  bool avx2 = false;         // AVX2 + FMA, OS saves ymm
  bool avxvnni = false;      // AVX-VNNI (VEX vpdpbusd), OS saves ymm
  bool avx512bw = false;     // AVX-512 F/BW + AVX2 + FMA, OS saves zmm
  bool avx512vnni = false;   // AVX-512 F/BW/VL/DQ + VNNI, OS saves zmm
  bool avx512bf16 = false;   // AVX-512 BF16 (vdpbf16ps)
  // AMX-TILE + AMX-INT8 (tdpbusd) with AVX-512 VNNI, the OS saving the tile
  // state (XCR0 bits 17-18) and, on Linux, this process granted it
  // (arch_prctl ARCH_REQ_XCOMP_PERM, asked for once here).
  bool amx_int8 = false;
  bool f16c = false;
  // 256-bit vector operations run as two 128-bit halves: AMD family 17h
  // models 00h-2Fh (Zen, Zen+) and Hygon family 18h (Dhyana, the same
  // core). Kernels may then prefer a 128-bit form (raw_b_small_m.h).
  bool splits_256 = false;
  std::string brand;         // CPUID brand string
  int family = 0, model = 0;  // CPUID display family and model (AMD 25 / 17: Zen 4 "Genoa"; 26: Zen 5)
};

// Detected once on first use; thread-safe.
const Features& features();

}  // namespace qmatmul::cpu

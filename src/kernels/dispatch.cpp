// The dispatch table: one row per ISA, filled from the per-ISA getters ("was
// it compiled") and src/cpu ("can it run"). The choice is made once; the
// QMATMUL_ISA override is validated here so a typo is an error, not a silent
// fallback.
#include "kernels/dispatch.h"

#include <cstdlib>

#include "cpu/cpu_features.h"
#include "kernels/x86/x86_kernels_extra.h"  // small-M getters (x86_absent.cpp elsewhere)
#include "qmatmul/types.h"

namespace qmatmul::kernels {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Portable: return "portable";
    case Isa::Avx2: return "avx2";
    case Isa::AvxVnni: return "avxvnni";
    case Isa::Avx512Vnni: return "avx512vnni";
    case Isa::Avx512Bw: return "avx512bw";
    case Isa::Amx: return "amx";
  }
  return "unknown";
}

bool cpu_supports(Isa isa) {
  const auto& cpu = cpu::features();
  switch (isa) {
    case Isa::Portable: return true;
    case Isa::Avx2: return cpu.avx2;
    case Isa::AvxVnni: return cpu.avxvnni;
    case Isa::Avx512Vnni: return cpu.avx512vnni;
    case Isa::Avx512Bw: return cpu.avx512bw;
    case Isa::Amx: return cpu.amx_int8;
  }
  return false;
}

namespace {

// A table row; the small-M kernels (same B packing as `compiled`) join it
// only when its ISA is usable and they were compiled.
IsaStatus make_row(Isa isa, const Int8GemmKernel* compiled,
                   const Int8GemmKernel* small_m = nullptr,
                   const Int8GemmKernel* (*small_m_for)(int) = nullptr) {
  IsaStatus row{isa, compiled != nullptr, cpu_supports(isa), nullptr, nullptr, nullptr};
  if (row.compiled && row.cpu_supports) {
    row.kernel = compiled;
    row.small_m = small_m;
    if (small_m != nullptr) row.small_m_for = small_m_for;
  }
  return row;
}

// The AMX row's kernels for few rows (the same B packing): the AVX-512 VNNI
// ones for 1 to 7 rows, the 16-row AMX tile for 8 to 16.
const Int8GemmKernel* amx_small_m_for(int m) {
  if (m >= 1 && m <= 7) return int8_kernel_avx512vnni_small_m_for(m);
  if (m >= 8 && m <= 16) return int8_kernel_amx_16_rows();
  return nullptr;
}

Dispatch build() {
  Dispatch d;
  // AMX: its 32 x 32 tile from 17 rows up, its 16 x 32 tile from 8 (calls
  // and the last rows of a block of 1 to 7 rows run the AVX-512 VNNI
  // kernels, which read the same B packing).
  d.table.push_back(make_row(Isa::Amx, int8_kernel_amx(), int8_kernel_amx_16_rows(), amx_small_m_for));
  d.table.push_back(make_row(Isa::Avx512Vnni, int8_kernel_avx512vnni(), int8_kernel_avx512vnni_small_m(),
                             int8_kernel_avx512vnni_small_m_for));
  d.table.push_back(make_row(Isa::AvxVnni, int8_kernel_avxvnni(), int8_kernel_avxvnni_small_m(),
                             int8_kernel_avxvnni_small_m_for));
  // AVX-512 BW without VNNI: the exact int16 kernel in zmm, after AVX-VNNI
  // (a CPU with both would multiply twice the bytes per instruction there).
  d.table.push_back(make_row(Isa::Avx512Bw, int8_kernel_avx512bw(), int8_kernel_avx512bw_small_m(),
                             int8_kernel_avx512bw_small_m_for));
  d.table.push_back(make_row(Isa::Avx2, int8_kernel_avx2(), int8_kernel_avx2_small_m(),
                             int8_kernel_avx2_small_m_for));
  d.table.push_back(make_row(Isa::Portable, int8_kernel_portable()));

  const char* forced = std::getenv("QMATMUL_ISA");
  if (forced != nullptr && *forced != '\0') {
    const std::string want = forced;
    for (const auto& row : d.table) {
      if (want != isa_name(row.isa)) continue;
      if (!row.compiled)
        throw Error("QMATMUL_ISA=" + want + ": this build does not include the " + want + " kernels");
      if (!row.cpu_supports)
        throw Error("QMATMUL_ISA=" + want + ": this CPU cannot run " + want + " instructions");
      d.reason = "forced by QMATMUL_ISA=" + want;
      d.chosen = &row;
      return d;
    }
    throw Error("QMATMUL_ISA=" + want + ": unknown instruction set; use one of "
                "portable, avx2, avxvnni, avx512bw, avx512vnni, amx");
  }
  for (const auto& row : d.table) {
    if (row.kernel != nullptr) {
      d.chosen = &row;
      d.reason = "best path compiled in and supported by this CPU";
      break;
    }
  }
  return d;
}

}  // namespace

const Dispatch& dispatch() {
  static const Dispatch d = build();
  return d;
}

namespace {

// The kernel `row` runs for m rows: its small-M kernels up to their height,
// else its main kernel.
const Int8GemmKernel& kernel_of_row(const IsaStatus& row, int64_t m) {
  if (row.small_m_for != nullptr && m >= 1 && m <= row.small_m->mr)
    if (const Int8GemmKernel* k = row.small_m_for(static_cast<int>(m))) return *k;
  if (row.small_m != nullptr && m <= row.small_m->mr) return *row.small_m;
  return *row.kernel;
}

// Under AMX, the AVX-512 VNNI row's kernel for up to 8 rows (its main
// kernel's height) when K is short: there the 16-row AMX tile's padding
// rows cost more than streaming B saves. Measured (MatMulInteger u8, 1
// thread, GOPS AVX-512 VNNI / AMX 16 rows, unpacked / packed B): 64 batches
// of 8 x 64 x 64 217 / 192, 325 / 253; of 8 x 256 x 256 155 / 157, 323 /
// 317; 8 x 768 x 768 packed 575 / 1118; 8 x 256 x 4096 packed 460 / 826; 8 x
// 4096 x 4096 packed 309 / 400.
const IsaStatus* amx_few_rows_row(int64_t m, int64_t k) {
  if (k >= kAmxFewRowsMinK) return nullptr;
  for (const IsaStatus& row : dispatch().table)
    if (row.isa == Isa::Avx512Vnni && row.kernel != nullptr && m <= row.kernel->mr) return &row;
  return nullptr;
}

}  // namespace

const Int8GemmKernel& int8_kernel_for(int64_t m, int64_t k) {
  const IsaStatus& row = *dispatch().chosen;
  if (row.isa == Isa::Amx)
    if (const IsaStatus* vnni = amx_few_rows_row(m, k)) return kernel_of_row(*vnni, m);
  return kernel_of_row(row, m);
}

const Int8GemmKernel* int8_tail_kernel_for(const Int8GemmKernel& k, int64_t rows) {
  if (rows < 1 || rows >= k.mr) return nullptr;
  for (const IsaStatus& row : dispatch().table) {
    if (row.isa != k.isa || row.small_m_for == nullptr) continue;
    const Int8GemmKernel* t = row.small_m_for(static_cast<int>(rows));
    if (t != nullptr && t->mr < k.mr && same_b_layout(*t, k) && t->widening == k.widening) return t;
  }
  return nullptr;
}

}  // namespace qmatmul::kernels

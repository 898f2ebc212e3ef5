// `qmatmul info`: version, CPU features, which kernels this build compiled,
// which the CPU can run, and the kernel chosen (with the reason), for the
// int8 operators and for float8, so a user can see exactly what path their
// numbers come from.
#include <omp.h>

#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.h"
#include "cpu/cpu_features.h"
#include "gemm/float8_gemm.h"
#include "gemm/raw_b_small_m.h"
#include "gemm/thread_cost.h"
#include "kernels/dispatch.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul::cli {
namespace {

// Calls emit(from, to, value) for each run of consecutive rows in 1..last
// whose value_of(m) is the same, in order.
template <typename ValueOf, typename Emit>
void for_each_run_of_rows(int last, ValueOf value_of, Emit emit) {
  for (int m = 1, from = 1; m <= last; ++m)
    if (m == last || value_of(m + 1) != value_of(m)) {
      emit(from, m, value_of(m));
      from = m + 1;
    }
}

// A run of rows as text: "5..16", or "1" when it holds one row.
std::string row_range(int from, int to) {
  return std::to_string(from) + (to > from ? ".." + std::to_string(to) : "");
}

// The rows in 1..kMaxRows for which holds(m), as ranges: "1, 5..16".
template <typename Holds>
std::string rows_where(Holds holds) {
  std::string rows;
  for_each_run_of_rows(gemm::kMaxRows, holds, [&](int from, int to, bool value) {
    if (!value) return;
    rows += (rows.empty() ? "" : ", ") + row_range(from, to);
  });
  return rows;
}

// The raw-B path's column blocks from kRawBLargeBytes of B by rows, up to
// `last`: "one thread 4096 at M = 1..8, 512 at M = 9..16; more threads
// 2048 at M = 1..4, ...".
std::string block_widths_by_rows(kernels::Isa isa, int last) {
  std::string text;
  for (int threads : {1, 2}) {
    text += threads == 1 ? "one thread " : "; more threads ";
    std::string runs;
    for_each_run_of_rows(
        last, [&](int m) { return gemm::raw_b_block_cols(isa, m, gemm::kRawBLargeBytes, threads); },
        [&](int from, int to, int64_t width) {
          runs += (runs.empty() ? "" : ", ") + std::to_string(width) + " at M = " + row_range(from, to);
        });
    text += runs;
  }
  return text;
}

// The raw-B path's size rule by rows, in runs of equal bounds: " any size at
// M = 1..9, at least 128 KB at M = 10..14, ...". min_bytes(m): the bytes of
// B m rows need (0: any).
template <typename MinBytes>
void print_min_bytes_by_rows(int last, MinBytes min_bytes) {
  for_each_run_of_rows(last, min_bytes, [](int from, int to, int64_t bytes) {
    const int64_t kb = bytes / 1024;
    std::cout << (from > 1 ? "," : "") << " " << (kb == 0 ? "any size" : "at least " + std::to_string(kb) + " KB")
              << " at M = " << from << ".." << to;
  });
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show version, CPU features and the kernels chosen");
  cmd->callback([] {
    const auto& cpu = cpu::features();
    std::cout << "qmatmul " << version() << "\n";
    std::cout << "cpu: " << (cpu.brand.empty() ? "unknown" : cpu.brand) << " (family " << cpu.family << ", model "
              << cpu.model << ")\n";
    std::cout << "cpu features: avx2=" << cpu.avx2 << " avxvnni=" << cpu.avxvnni
              << " avx512bw=" << cpu.avx512bw << " avx512vnni=" << cpu.avx512vnni << " avx512bf16=" << cpu.avx512bf16 << " f16c=" << cpu.f16c
              << " splits_256=" << cpu.splits_256 << "\n";
    const auto& d = kernels::dispatch();
    std::cout << "int8 kernels (best first):\n";
    for (const auto& row : d.table) {
      std::cout << "  " << kernels::isa_name(row.isa) << ": compiled=" << (row.compiled ? "yes" : "no")
                << " cpu=" << (row.cpu_supports ? "yes" : "no");
      if (row.kernel) std::cout << " kernel=" << row.kernel->name;
      if (row.small_m) std::cout << " small_m=" << row.small_m->name;
      if (&row == d.chosen) std::cout << "   <- chosen";
      std::cout << "\n";
    }
    std::cout << "chosen: " << kernels::isa_name(d.chosen->isa) << " (" << d.reason << ")\n";
    std::cout << "type pairs (A x B): u8 x u8, u8 x s8, s8 x u8, s8 x s8 all run "
              << d.chosen->kernel->name << " via the +-128 shift (src/gemm/zero_point.h)\n";
    if (d.chosen->isa == kernels::Isa::Amx)
      std::cout << "amx: calls of 8 to " << d.chosen->small_m->mr << " rows and a block's last 8 to "
                << d.chosen->small_m->mr << " rows run " << d.chosen->small_m->name
                << "; calls and last rows of 1 to 7 rows, and calls of 8 rows with K < " << kernels::kAmxFewRowsMinK
                << ", the AVX-512 VNNI kernels (the same B packing); unpacked B up to " << gemm::kMaxRowsAmx
                << " rows their raw-B kernels, below\n";
    if (gemm::raw_b_isa(d.chosen->isa) != kernels::Isa::Avx512Vnni) {
      if (const char* raw = gemm::raw_b_small_m_name(d.chosen->isa, 1, 1, 1)) {
        // The AVX2 kernels (also under AVX-VNNI): one form; the size of B
        // they need, by rows, in runs.
        const kernels::Isa isa = d.chosen->isa;
        int last = gemm::kMaxRowsAvx2;
        while (last > 1 && gemm::raw_b_min_bytes_avx2(isa, last) < 0) --last;
        std::cout << "unpacked B with M <= " << last << ": " << raw << " .. "
                  << gemm::raw_b_small_m_name(isa, last, 1, gemm::raw_b_min_bytes_avx2(isa, last))
                  << " (B rows read in place, never packed, as exact int16 pairs; src/gemm/raw_b_small_m.h), for a B of";
        print_min_bytes_by_rows(last, [&](int m) { return gemm::raw_b_min_bytes_avx2(isa, m); });
        std::cout << " (else B is packed in the tasks); from " << gemm::kRawBLargeBytes / 1024
                  << " KB of B, column blocks of " << block_widths_by_rows(isa, last);
        if (last < gemm::kMaxRows) std::cout << "; more rows: B packed in the tasks";
        if (cpu.splits_256)
          std::cout << "; at M <= " << gemm::kMaxRowsNarrowAvx2
                    << " the narrow form (8 columns in xmm), since this CPU splits 256-bit operations";
        std::cout << "\n";
      }
    } else if (const char* raw = gemm::raw_b_small_m_name(kernels::Isa::Avx512Vnni, 1, 1, gemm::raw_b_min_bytes(1))) {
      std::cout << "unpacked B with M <= " << gemm::kMaxRows << ": " << raw << " .. "
                << gemm::raw_b_small_m_name(kernels::Isa::Avx512Vnni, gemm::kMaxRows, 1, gemm::raw_b_min_bytes(gemm::kMaxRows))
                << " (B rows read in place, never packed; src/gemm/raw_b_small_m.h), for a B of";
      print_min_bytes_by_rows(gemm::kMaxRows, [](int m) { return gemm::raw_b_min_bytes(m); });
      // The M whose large-B form is a kernel of its own, as ranges.
      const std::string own_forms = rows_where(gemm::raw_b_has_own_large_b_form);
      std::cout << " (else B is packed in the tasks); from " << gemm::kRawBLargeBytes / 1024
                << " KB of B, column blocks of " << block_widths_by_rows(kernels::Isa::Avx512Vnni, gemm::kMaxRows)
                << ", and the kernels' large-B form, its own kernel at M = " << own_forms
                << ", which also prefetches B ahead of its loads\n";
    }
    if (const kernels::Int8GemmKernel& main = *d.chosen->kernel; main.tile_a_in_place != nullptr)
      std::cout << "A with every zb' = 0" << (main.a_in_place_int8 ? "" : ", uint8 A")
                << (main.a_in_place_max_k > 0 ? " and K <= " + std::to_string(main.a_in_place_max_k) : "") << ": "
                << main.name << " reads A in place"
                << (main.a_in_place_int8 ? " (int8 A shifted to the u8 domain as it is read)" : "")
                << ", no packing pass, in whole tiles (at K % " << main.kr
                << " != 0 those whose reads past a row stay within the matrix; src/gemm/driver.cpp)\n";
    if (d.chosen->kernel->tile_requant != nullptr)
      std::cout << "QLinearMatMul with every zb' = 0, parameters the same for every row and finite multipliers: "
                << d.chosen->kernel->name << " requantizes its whole tiles in registers (its requantizing form; "
                << "else the kernel adds the column term and the epilogue requantizes; src/gemm/driver.cpp)\n";
    if (d.chosen->kernel->tile_half != nullptr)
      std::cout << "a last panel of at most " << d.chosen->kernel->nr / 2 << " columns: " << d.chosen->kernel->name
                << " computes only its first " << d.chosen->kernel->nr / 2
                << " columns (the kernel's half-width form; src/gemm/driver.cpp)\n";
    if (d.chosen->small_m != nullptr && d.chosen->small_m->tile_pair != nullptr)
      std::cout << "packed B with M <= " << d.chosen->small_m->mr << ": one row tile per panel, two panels per "
                << "kernel call (the kernels' two-panel form, MR x " << 2 * d.chosen->small_m->nr << ")\n";
    {  // the last, partial row tile of a block: its own kernel where there is one
      const kernels::Int8GemmKernel& main = *d.chosen->kernel;
      std::string tails;
      int padded = 0;  // heights without a kernel of their own
      for (int r = 1; r < main.mr; ++r) {
        if (const kernels::Int8GemmKernel* t = kernels::int8_tail_kernel_for(main, r))
          tails += std::string(tails.empty() ? "" : ", ") + std::to_string(r) + " -> " + t->name;
        else
          ++padded;
      }
      if (!tails.empty())
        std::cout << "last row tile with fewer than " << main.mr << " rows: " << tails << " ("
                  << (padded > 0 ? "other heights run " + std::string(main.name) + " on zero-padded rows; " : "")
                  << "src/gemm/driver.cpp)\n";
    }
    std::cout << "batched A over one B (int8): one product of all the batches' rows when every parameter is per "
                 "tensor, per column, or per row given for every batch (src/api/operators.cpp); else batch by "
                 "batch\n";
    std::cout << "float8 (QLinearMatMul-21): " << gemm::float8_path_name(gemm::float8_auto_path())
              << " (avx512 compiled+cpu=" << (gemm::float8_avx512_usable() ? "yes" : "no")
              << ", avx512bf16 compiled+cpu+rounding probe=" << (gemm::float8_bf16_usable() ? "yes" : "no")
              << "; bf16 tiles only when every operand value is exact in bfloat16, float32 FMA tiles otherwise)\n";
    const double region_us = gemm::parallel_region_cost_us();
    const int64_t per_thread = gemm::work_per_thread_for_region_cost(Options{}.min_macs_per_thread, region_us);
    std::ostringstream region;
    if (region_us > 0)
      region << std::fixed << std::setprecision(1) << region_us << " us here";
    else
      region << "- (one core)";
    std::cout << "threads: Options::threads (0 = all " << omp_get_num_procs() << " cores) at most; a call takes one per "
              << per_thread << " units of work by default (Options::min_macs_per_thread " << Options{}.min_macs_per_thread
              << ", raised by Options::measure_thread_cost: an empty 2-thread region measured "
              << region.str()
              << ", " << gemm::kUnitsPerRegionMicrosecond / 1e6
              << "M units a microsecond, src/gemm/thread_cost.h; a unit is a multiply-add, 3 for float8, plus "
                 "4 per byte of B; half that with 4 or more output batches per thread; static schedule, "
                 "src/gemm/parallel_region.h)\n";
    std::cout << "override: QMATMUL_ISA=portable|avx2|avxvnni|avx512bw|avx512vnni|amx (float8 follows: avx512vnni, amx -> "
                 "avx512bf16 or avx512, others -> portable)\n";
  });
}

}  // namespace qmatmul::cli

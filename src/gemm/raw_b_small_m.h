// A few rows of A against an unpacked B, without packing B: the driver's
// path for M <= kMaxRows (LLM decoding with weights that change per call, or that
// the caller did not prepare), where packing B would cost more than the
// product itself. The kernel reads B's rows directly and interleaves them in
// registers (src/gemm/x86/raw_b_small_m_avx512vnni.cpp; for CPUs without
// AVX-512 VNNI, src/gemm/x86/raw_b_small_m_avx2.cpp);
// run_raw_b_small_m splits the call into column blocks over threads (or,
// for the AVX2 kernels with few rows, K: each thread sums its part of B's
// rows, and the parts are added) and hands each 32-column tile of the
// sums to the usual epilogue.
#pragma once

#include <cstdint>

#include "gemm/problem.h"

namespace qmatmul::gemm {

// Columns [0, cols) of a row-major K x N int8/uint8 matrix B (`b` at its
// first column, row stride N), against the m rows of A' the kernel was
// chosen for (the kernels of 1 to kMaxRowsOwnKernel rows are compiled for
// their count; m must be it), with a_zero[i] = za' of row i (0..255):
//   acc[i * ld + s + j] - a_zero[i] * col_sums[s + j]
//       = sum_k (a[i * kp + k] - a_zero[i]) * B'[k][j]  (i < m, wrapping int32)
// in one of two forms, each kernel always the same one:
//   plain (AVX-512 VNNI, whose bytes cannot hold a' - za'):
//     acc = sum_k a' B' and col_sums = sum_k B' (a_zero is not read);
//   folded (AVX2, whose int16 pairs can): acc = sum_k (a' - za') B' and
//     col_sums = 0.
// Either way the epilogue's algebra (zero_point.h) gives C from acc, the
// row sums of A' and col_sums. B' = B XOR flip read as int8 (flip 0x80 maps
// uint8 into the s8 domain of zero_point.h), `a` holds m rows of A' (u8 domain) with row
// stride kp (at least K rounded up to a multiple of 4; row i's words past K
// up to that multiple are zeros, the rest are never read), and s (0..63,
// returned) is where column 0 landed: the kernel may shift the block back
// to a 64-byte line boundary so that its loads of B are aligned (only when
// N is a multiple of 64; s is then b's offset within its line, else 0). acc
// (64-byte aligned, ld >= s + cols rounded up to 64, which cols + 63
// rounded up to 64 always covers; a multiple of 16) and col_sums (64-byte
// aligned, as wide) are written over at most their first s + cols entries
// rounded up to 64; indices outside [s, s + cols) hold no meaning. The
// driver's blocks start on a line, so a block of L lines needs ld >= 64 L.
// Only `cols` columns of each of the K rows of B are read.
using RawBSmallMFn = int64_t (*)(const uint8_t* a, int m, int64_t kp, const int32_t* a_zero, const unsigned char* b,
                                 int64_t K, int64_t N, int64_t cols, unsigned char flip, int32_t* acc, int64_t ld,
                                 int32_t* col_sums);

// Rows of A the path takes on AVX-512 VNNI: up to 64. The kernel
// interleaves B in registers, a step of 4G rows at a time, and updates
// every row's sums with it: in registers up to 2 rows, through L1 one row
// at a time above. Measured on Zen 5, 4096 x 4096 (unpacked MatMulInteger,
// GOPS at 1 / 2 threads): M = 8 351 / 614, M = 12 405 / 723, M = 16 400 /
// 734; packing B per call and running the tile kernels was 0.6-0.7x at
// M = 8. From 17 rows, against B packed in the tasks (QLinear u8, no
// oneDNN, 3 interleaved rounds, 1 / 2 threads) with B of 16 MB: 24 x 4096
// x 4096 2.07 / 1.88, 32 rows 1.58 / 1.50, 48 rows 1.25 / 1.42, 64 rows
// 1.06 / 1.22, 96 rows 0.84 / 0.88; with B of 4 MB it did not gain (32 and
// 64 x 1024 x 4096, 32 and 64 x 2048 x 2048, 48 x 1024 x 1024: 0.60-1.07),
// so from 17 rows the path needs kRawBLargeBytes of B (raw_b_min_bytes).
// Rows 1 to kMaxRowsOwnKernel have a kernel compiled for their count; one
// kernel takes any count from there to kMaxRows.
inline constexpr int kMaxRows = 64;
inline constexpr int kMaxRowsOwnKernel = 16;

// Under AMX, the AVX-512 VNNI raw-B kernels take unpacked B up to this many
// rows; from there the AMX tile on B packed in the tasks is faster.
// Measured (MatMulInteger u8 x s8, K = N = 4096, GOPS raw-B VNNI / AMX, 1
// thread): 7 rows 181 / 94, 8 197 / 104, 12 212 / 162, 16 252 / 220, 32
// 312-329 / 326-454; 2 threads, 32 rows 614 / 889.
inline constexpr int kMaxRowsAmx = 16;

// The instruction set whose raw-B kernels run for a dispatch choice: AMX's
// are AVX-512 VNNI's (same CPUs, same B packing), the others their own.
constexpr kernels::Isa raw_b_isa(kernels::Isa isa) {
  return kernels::is_avx512vnni_family(isa) ? kernels::Isa::Avx512Vnni : isa;
}

// The row stride, in bytes, at which the driver places the rows of A' for
// the kernel: whole lines, an odd number of them (4160 at K = 4096), so that
// the rows' words fall in different L1 sets (see raw_b_small_m.cpp).
int64_t raw_b_a_row_stride(int64_t K);

// The columns per task the driver gives m rows against a B of b_bytes
// (K * N) on `threads` threads, for the raw-B kernel of `isa` (Avx512Vnni,
// or Avx2 / AvxVnni for the AVX2 kernels): from kRawBLargeBytes 2048, so
// that B's rows are read in long segments, and 4096 (whole rows of a
// 4096-wide B) for up to 8 rows on one thread; but on AVX-512 VNNI 1024
// at 5 to 8 rows on one thread, 512 on more threads and from 9 rows, 256
// from 17 rows, so that the sums of a block stay in L1. Below
// kRawBLargeBytes, 1024 up to 2 rows, 512 at 3 and 4, 256 above. The driver
// then splits the columns into the nearest count of blocks that the
// threads share evenly.
int64_t raw_b_block_cols(kernels::Isa isa, int64_t m, int64_t b_bytes, int threads);

// The AVX-512 VNNI kernel for M = m rows (1..kMaxRows); nullptr for other m and
// when that file was compiled without AVX-512 VNNI. `large_b` selects the
// form for a B too large to stay in the caches between calls (at 1 row and
// from 5 rows it prefetches B ahead of its loads; from 2 to 4 rows both
// forms are one kernel, which always does).
// Both give the same bits. From 17 rows there is only the large-B form
// (nullptr for the other), since only a B that large takes the path.
RawBSmallMFn raw_b_small_m_avx512vnni_fn(int m, bool large_b = false);

// Rows of A the AVX2 kernels take: up to 64 (raw_b_small_m_avx2.cpp: exact
// vpmaddwd on int16 pairs, za' folded into A; every row's sums in registers through a step up
// to 4 rows, through L1 one row at a time above), with a kernel of its own
// for each count up to kMaxRowsOwnKernel and one for the rest.
inline constexpr int kMaxRowsAvx2 = 64;
// The AVX2 kernel for M = m rows (1..kMaxRowsAvx2); nullptr for other m and
// when that file was compiled without AVX2. One form for any size of B.
RawBSmallMFn raw_b_small_m_avx2_fn(int m);
// The narrow form of the AVX2 kernels (raw_b_small_m_avx2.cpp: 8 columns
// a chunk in xmm, each row of B widened as it is loaded), for CPUs that run
// each 256-bit operation as two 128-bit halves (cpu::Features::splits_256):
// there vpmovsxbw ymm, which the 16-column form widens B with, runs at a
// quarter of the rate of its xmm form. For 1 to kMaxRowsNarrowAvx2 rows
// (one: see raw_b_small_m.cpp); nullptr for other m and without AVX2.
// Same contract and folded form.
inline constexpr int kMaxRowsNarrowAvx2 = 1;
RawBSmallMFn raw_b_small_m_avx2_narrow_fn(int m);
// The AVX2 kernel the path takes for m rows: the narrow form where the CPU
// splits 256-bit operations and it has one for m, else
// raw_b_small_m_avx2_fn(m).
RawBSmallMFn raw_b_small_m_avx2_for(int m, bool splits_256);
// True when the large-B form for m rows is a kernel of its own (1 row and
// from 5 rows; from 2 to 4 rows both forms are one kernel), false also
// when the kernel was not compiled.
bool raw_b_has_own_large_b_form(int m);

// The bytes of B (K * N) from which the large-B form runs: B that size is
// read from memory rather than L3 whenever other work shares the caches.
inline constexpr int64_t kRawBLargeBytes = 8 * 1024 * 1024;

// The bytes a K x N matrix B needs (K * N) for an unpacked call with m rows
// to take the raw-B path: 32 KB up to 9 rows, then more, since the packed
// tile kernels, with B packed in the tasks, win on a B that stays in cache.
int64_t raw_b_min_bytes(int64_t m);

// The same for the AVX2 kernels under `isa` (Avx2, AvxVnni or Avx512Bw), or
// -1 when m rows never take them: AVX2 any B up to 16 rows,
// kRawBLargeBytes from 17; AVX-VNNI,
// whose vpdpbusd tile kernels are faster while B stays in cache, any B up
// to 3 rows, kRawBLargeBytes at 4 to 8, never from 9; AVX-512 BW, whose
// zmm tile kernels also are, any B up to 4 rows, kRawBLargeBytes at 5 to
// 16, never from 17.
int64_t raw_b_min_bytes_avx2(kernels::Isa isa, int64_t m);

// The raw-B kernel an unpacked call with m rows and a K x N B runs when the
// dispatch chose `isa`, or nullptr. AVX-512 VNNI: m in 1..kMaxRows and B
// of at least raw_b_min_bytes(m), the large-B form from kRawBLargeBytes.
// AMX: the same up to kMaxRowsAmx rows (raw_b_isa). AVX2, AVX-VNNI and
// AVX-512 BW (whose CPUs all have AVX2): the AVX2 kernel for B of at least
// raw_b_min_bytes_avx2(isa, m). The path
// follows the dispatch choice: never for the portable path, and each
// forced ISA runs its own. nullptr too when the kernel was not compiled.
// The one place that decides.
RawBSmallMFn raw_b_small_m_kernel(kernels::Isa isa, int64_t m, int64_t K, int64_t N);

// The name of that kernel, e.g. "u8s8_rawb_2x64c4__avx512vnni" (64 columns
// per register group, k-groups of 4), with " (large-B form)" when that form
// runs and is a kernel of its own, or "u8s8_rawb_2x16c2_int16__avx2" (16
// columns, int16 pairs of k), or nullptr when there is none.
const char* raw_b_small_m_name(kernels::Isa isa, int64_t m, int64_t K, int64_t N);

// The raw-B kernel for p, or nullptr when p has no such path (B packed, or
// raw_b_small_m_kernel says none).
RawBSmallMFn raw_b_small_m_for(const GemmProblem& p);

// Computes p (B raw, p.b_raw; no dimension 0) with `kernel` = raw_b_small_m_for(p).
void run_raw_b_small_m(const GemmProblem& p, RawBSmallMFn kernel);

}  // namespace qmatmul::gemm

// The driver of the raw-B path for M <= kMaxRows (see raw_b_small_m.h): tasks are
// (output batch, block of columns); each worker maps its batch's A rows into
// the u8 domain once (with their row sums), runs the kernel over its column
// block and passes each 32-column tile of the block's sums to the epilogue.
// The AVX2 kernels on one batch with few rows split K between the threads
// instead (run_raw_b_split_k).
// The kernel reads only B, once, in row order, so the work is bound by that
// read (about 40 GB/s on one core here) instead of by packing.
#include "gemm/raw_b_small_m.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/cpu_features.h"
#include "gemm/epilogue.h"
#include "gemm/pack.h"
#include "gemm/parallel_region.h"
#include "gemm/zero_point.h"

namespace qmatmul::gemm {
namespace {

// Columns per task. Measured (4096 x 4096, 1 and 2 threads): up to 2 rows,
// whose sums stay in registers through a step, 1024 (256 loses half the
// speed at M = 2); 3 and 4 rows, whose sums go through L1 one row at a time
// since that was faster (raw_b_small_m_avx512vnni.cpp), 512 (QLinear u8,
// 6 interleaved rounds, against 1024: +1-6% at 3 x 4096 x 4096, 4 x 4096 x
// 4096 and 4 x 1024 x 4096, 1 and 2 threads; 256 was 0.86-1.02); with the
// sums of 5 or more rows going through memory block by block, 256 (1024 is
// 20-35% slower at M = 5, 6; at M = 7, 8, 512 and 1024 are 10-20% slower;
// measured with blocks of 3 rows; one row at a time, 512 read 0.95-1.07 at
// M = 6, 8 and 16, 6 rounds).
// The AVX2 kernels take the same widths: against 256 and 2048 columns at 1
// and 2 rows, 256 and 1024 at 3 and 4 (sums in registers through a step;
// QLinear u8, 3 interleaved rounds, 1 / 2 threads, 1-4 x 4096 x 4096, 1-4
// x 2048 x 2048 and 1 and 4 x 1024 x 1024) the others read 0.82-1.03 in
// every row but one (256 columns, 2 x 2048 x 2048, 2 threads: 1.13); from
// 5 rows (one row at a time) 512 read 0.96-1.06 against 256 (5, 6, 8 x
// 4096 x 4096, 8 x 2048 x 2048 and 8 x 1024 x 1024).
// From kRawBLargeBytes of B, 2048 for any rows, since B then comes from
// memory (or L3) and the width sets how it is read: each block reads its
// rows' segments of `width` bytes, K of them, each on its own 4 KB page at
// N = 4096. A plain read of a 16 MB B in that order ran 6-9 GB/s in 256-byte
// segments, 15-31 in 1024-byte ones and 29-33 in 2048-byte ones (with the
// next rows prefetched), 31-41 whole rows at a time, on a day when this
// machine's memory was slow (1 row, 64 MB: 10 GB/s). The wider block costs its sums a trip to L2 from
// 3 rows (16 x 2048 int32 = 128 KB), which the kernel alone shows with B in
// cache: 16 x 512 x 2048, 1 thread, 2048 columns against 256 read 0.92-0.94.
// Measured at 4096 x 4096 (QLinear u8, unpacked, no oneDNN, 6 interleaved
// rounds, 1 / 2 threads; at 2 threads the rule below then narrowed 2048
// to 1024, before it kept one task per thread from kRawBLargeBytes), 2048 against the widths above: M = 3 1.45 / 1.34, 5 1.87 / 1.95,
// 6 2.27 / 1.85, 12 1.54 / 1.14, 16 1.40 / 1.28 (1024: 1.14-2.03 / 0.97-
// 2.03); M = 1 (against 1024) 1.47 / 1.34 in 4 rounds. The rule as it
// stands against the widths before, in one loop with oneDNN's sides (QLinear
// u8 and s8, 4 rounds): M = 2 to 8 1.11-1.73 / 1.02-1.48, 16 1.32-1.35 /
// 1.13-1.26, 1 row 1.08-1.34 / 0.87-0.98 (4 and 2 wins of 4 at 1 thread,
// 1 and 2 at 2 threads: noise that day was +-15%). On a day when memory
// was fast, 1024 had lost 20-35% to 256 at 5 and 6 rows with an older
// kernel (three rows of sums at a time) and 512 had read 0.95-1.07 with
// this one: where B streams fast the wider block may lose a few percent,
// where it does not it gains up to 2x. The AVX2 kernels (QMATMUL_ISA=avx2,
// 1 thread, 5 rounds): M = 3, 6, 8, 16 1.19, 1.15, 1.26, 1.18; 1 row 1.02.
constexpr int64_t kBlockColsLargeB = 2048;
// One thread with up to 8 rows (on AVX-512 VNNI up to 4, see
// kBlockColsFiveToEightRows) reads B's rows whole from kRawBLargeBytes
// (4096 columns: a row of a 4096-wide B is one 4 KB page). Against 2048,
// 1 thread, 4096 x 4096, qmatmul bench with oneDNN's sides in the loop,
// MatMulInteger and QLinear u8 and s8, 8 interleaved rounds each:
// M = 1 1.15-1.25 (7-8 wins of 8), 2 1.00-1.05 (5-6), 3 1.10-1.15 (6-8),
// 4 1.10-1.12 (6), 5 1.01-1.08 (5-8), 6 1.08-1.15 (6-8), 7 1.06-1.10
// (6-7), 8 1.09-1.11 (6-7); rows left alone in the same loops (M = 3, 4
// or 9) read 0.89-1.07. MatMulInteger alone with B read from memory (a
// 64 MB buffer walked between calls), 5 rounds: M = 5-8 1.10-1.23 (5 wins
// of 5); with B left in L3, 0.93-1.08, the noise of that loop. The AVX2
// kernels (QMATMUL_ISA=avx2, MatMulInteger alone, M = 4-9, 5 rounds, B from
// memory or L3): 0.95-1.08, even.
// Not at 2 threads: each thread then reads its half of every row, which is
// what the blocks of 2048 already do at N = 4096, and for other N whole
// rows would split unevenly. Splitting K between 2 threads instead, each
// reading whole rows and the parts' sums added after (MatMulInteger alone,
// 4 rounds): in two halves of K 0.5-0.9x at M = 4-8; taking B's rows in
// turn (thread q rows q, q + 2, ..) 0.66-0.77 at M = 4-8, 0.94-1.17 at 1
// and 2. Not from 9 rows, whose M x 4096 sums fill more of L2: 12 and 16
// rows read 0.96-1.00 with B in L3, and 16 rows 0.93 from memory. Later,
// on Zen 1, the AVX2 kernels gained from halves of K (1.02-1.26 at 4096 x
// 4096 on 2 threads), and they split K (split_k_parts).
constexpr int64_t kBlockColsFullRows = 4096;
constexpr int64_t kFullRowsMaxRows = 8;
// The AVX-512 VNNI kernel from kRawBLargeBytes, where its sums, not B's
// segments, set the pace: 512 columns from 9 rows and from 5 rows on two
// threads or more, 256 from 17 rows, so that a block's sums (M x width
// int32) stay within 32 KB of L1 instead of passing through L2 every step.
// The kernel alone (its driver's blocks and A' stride, K = N = 4096, one
// 16 MB B left in L3 / four walked in turn so that B comes from memory, 2-3
// rounds at different times, GOPS, 1 thread on one core):
//   rows   512           2048          256
//   9      418-440 / 369-385   352-355 / 316-322   432-437 / 360-377
//   12     315-533 / 342-454   351-400 / 337-374   426-511 / 392-437
//   16     485-589 / 467-538   413-473 / 409-418   546-601 / 468-512
//   24     534-574 / 513-553   494-545 / 461-511   430-637 / 577-612
//   32     583-587 / 546-558   563-583 / 538-548   692-705 / 634-671
//   64     646-648 / 627-646   643-656 / 540-627   619-646 / 613-629
// On two threads (milliseconds per product, each thread 4 blocks of 512
// against 1 of 2048): B in L3, M = 5 0.27-0.30 / 0.35-0.48, 6 0.30-0.31 /
// 0.39-0.41, 8 0.35-0.58 / 0.43-0.64, 12 0.48 / 0.64-0.66, 16 0.56-0.75 /
// 0.71-0.75; from memory M = 5 0.33-0.48 / 0.37-0.42, 6 0.38-0.39 / 0.45,
// 8 0.40-0.41 / 0.55-0.56, 16 0.53-0.54 / 0.66-0.67. Not for 5 to 8 rows
// on one thread, where the answer turned with the machine's state: B in
// L3, M = 5 / 8 read 308-330 / 383-411 at 512 against 254-278 / 323-344
// at whole rows one hour, 246-258 / 259-265 against 224-232 / 287-314 the
// next, and from memory 512 lost up to 25% at 8 rows (218-236 against
// 276-295); nor at 1 to 4 rows on two threads (1 row from memory: 0.51 ms
// at 512 against 0.36-0.39 at 2048). The AVX2 kernels, bound by their
// arithmetic (100-160 GOPS), read the same at 512 and 2048 from 9 to 24
// rows, and keep the rule below.
constexpr int64_t kBlockColsSumsInL1 = 512;
constexpr int64_t kBlockColsManyRows = 256;
// 5 to 8 rows on one thread: 1024, whose sums (up to 32 KB) stay in L1 too,
// and whose rows' segments are still 1 KB long. The kernel alone, as
// above, 1024 against whole rows: B in L3, M = 5 300 / 254, 6 334 / 298, 8
// 363 / 336 one hour, 167-263 / 224-232, 267-275 / 249-255, 299-340 /
// 287-314 the next; from memory M = 5 202-214 / 194-205, 6 231-246 /
// 192-234, 8 271-279 / 276-295. qmatmul bench, unpacked, no oneDNN, 4
// interleaved rounds, MatMulInteger / QLinear u8: 5 x 4096 x 4096 1.08 /
// 1.01, 6 x 4096 x 4096 1.05 / 1.08, 7 x 4096 x 4096 1.07 / 1.07, 8 x
// 4096 x 4096 1.04 / 1.03, 8 x 2048 x 8192 1.10 / 1.11, 6 x 8192 x 2048
// 1.06 / 1.04 (medians; 3-4 wins of 4 in all but two rows).
constexpr int64_t kBlockColsFiveToEightRows = 1024;
constexpr int64_t kBlockColsRegisterRows = 1024;
constexpr int64_t kBlockColsThreeFourRows = 512;
constexpr int64_t kBlockColsRowBlocks = 256;
constexpr int64_t kMinBlockCols = 256;
constexpr int64_t kTileCols = kPanelMaxCols;  // the epilogue's tile width

// One row of A' as the kernel reads it, as pack_a_rows writes it for MR = 1,
// KR = 4 bytes: contiguous, zero padded to a multiple of 4. (Only
// mr, kr and widening matter to the packer; the rest describes the raw-B
// kernel for anyone printing it.)
constexpr kernels::Int8GemmKernel kRowsOfA = {"u8s8_rawb__avx512vnni (A rows)", kernels::Isa::Avx512Vnni, 1, 64, 4,
                                              kernels::Widening::Bytes, nullptr};

}  // namespace

// Row stride of A' for the kernel: whole 64-byte lines, an odd number of
// them, so that the rows (read together, one 4-byte word each per k-group)
// fall in different L1 sets. With K = 4096 and rows 4096 bytes apart, all
// rows' words sat in one 12-way set beside B's lines, and from about 12 rows
// they could not all stay there. Measured at 4096 x 4096 against that tight
// stride (unpacked MatMulInteger, 6-10 interleaved rounds, 1 / 2 threads):
// M = 4 +6% / +3%, M = 5 +13-18% / +13-24%, M = 8 +9-15% / +5-12%, M = 3, 6
// within noise; and it is what made the register-interleave kernel beat the
// L1-scratch kernel it replaced for 9 to 16 rows (M = 9-12 +14-35% /
// +12-25%, M = 16 even).
int64_t raw_b_a_row_stride(int64_t K) { return ((K + 63) / 64 | 1) * 64; }

int64_t raw_b_block_cols(kernels::Isa isa, int64_t m, int64_t b_bytes, int threads) {
  if (b_bytes >= kRawBLargeBytes) {
    if (isa == kernels::Isa::Avx512Vnni && m >= 5) {
      if (m > kMaxRowsOwnKernel) return kBlockColsManyRows;
      return m > kFullRowsMaxRows || threads > 1 ? kBlockColsSumsInL1 : kBlockColsFiveToEightRows;
    }
    return threads == 1 && m <= kFullRowsMaxRows ? kBlockColsFullRows : kBlockColsLargeB;
  }
  return m <= 2 ? kBlockColsRegisterRows : m <= 4 ? kBlockColsThreeFourRows : kBlockColsRowBlocks;
}

// Measured against the packed path (B packed in the tasks, tile kernels),
// 1 thread, unpacked MatMulInteger, raw-B time / packed time, 6 interleaved
// rounds per shape, with the kernel's 2-row blocks from 10 rows:
//   K x N      128^2  256^2  384^2  512^2
//   M = 10      1.04                 0.87
//   M = 12      1.12   1.08   0.81   0.91
//   M = 14             1.10          0.84
//   M = 16             1.21          1.01
// M = 16 beyond: 512 x 1024 0.96 (1.03 at 2 threads), 768 x 768 0.87
// (1.18 at 2 threads), 1024 x 1024 0.92 (0.94 at 2 threads). Larger B was
// already faster raw with 3-row blocks (4096 x 4096: 0.69-0.83).
// With B in cache the packed tile kernels run faster than the
// raw-B kernel, whose sums from 3 rows pass through L1, and the packing
// costs little; the raw-B path wins once B is large enough. Below 10 rows
// only B of 16 KB or less loses, by microseconds a call; the path took such
// B anyway until batched calls showed that they pay those microseconds
// once per batch. Speed with B packed in the tasks over B raw
// (MatMulInteger, 3 rounds, 1 / 2 threads), 64 batches each with its own
// B: 8 x 64 x 64 2.16 / 2.04, 4 x 64 x 64 1.40 / 1.40, 1 x 64 x 64 1.07 /
// 1.07, 8 x 128 x 128 1.45 / 1.13, 4 x 128 x 128 1.05 / 1.10; one batch:
// 8 x 64 x 64 1.33, 8 x 128 x 128 1.25-1.30; at 32 KB even (8 x 128 x 256
// 0.95 / 1.08), at 64 KB raw B wins (8 x 256 x 256 0.85 / 0.98). So B raw
// from 32 KB. (The AVX2 kernels' raw-B path wins or ties at 4 and 16 KB:
// 0.62-1.07, so it keeps any size.)
// After the plain form took one row at a time (5-8% faster from 10 rows
// with B of 4 MB), the bounds hold: at 64 KB (10-14 rows) and 256 KB (15,
// 16) instead, the calls they moved to the raw-B path lost 3-14% at 1
// thread and 4-24% at 2 (10 x 256 x 320, 12 and 14 x 256 x 256, 16 x 512 x
// 512, 512 x 1024 and 768 x 768; qmatmul bench, no oneDNN, 6 rounds); only
// 15 x 768 x 768 at 1 thread gained (+6%).
int64_t raw_b_min_bytes(int64_t m) {
  if (m <= 9) return 32 * 1024;
  if (m <= 14) return 128 * 1024;
  if (m <= kMaxRowsOwnKernel) return 1024 * 1024;
  return kRawBLargeBytes;  // from 17 rows (raw_b_small_m.h: kMaxRows)
}

// The AVX2 kernels (up to 16 rows) against the packed path they replace,
// QLinear u8, unpacked, qmatmul bench without oneDNN, 3 interleaved rounds,
// 1 / 2 threads, raw-B GOPS / packed GOPS:
// - QMATMUL_ISA=avx2 (B packed in the tasks into the exact tile kernel's
//   int16 pairs): M = 1, 2, 3, 4 x 4096 x 4096 4.1 / 2.7, 2.7 / 2.0,
//   2.4 / 1.8, 1.8 / 1.5 (1 row: 10 -> 43 GOPS); 3 and 4 x 2048 x 2048
//   1.63 / 1.62, 1.24 / 1.32; 4 x 4096 x 1024 1.25 / 1.15; 4 x 1024 x 1024
//   1.27 / 1.20; 4 x 512 x 512 1.16 / 1.12; 2 x 512 x 512 1.58 / 1.39;
//   1 x 256 x 256 1.47 / 1.50. From 5 rows (one row at a time): M = 5, 6,
//   8 x 4096 x 4096 1.99 / 1.63, 1.88 / 1.59, 1.80 / 1.37; 6 and 8 x 2048
//   x 2048 1.15 / 1.15, 1.18 / 1.17; 8 x 1024 x 1024 1.22 / 1.24; 5 x 512
//   x 512 1.23 / 1.25. Every size gains, so always.
// - QMATMUL_ISA=avxvnni (its vpdpbusd tile kernels, B packed in the tasks):
//   M = 1, 2, 3, 4 x 4096 x 4096 4.3 / 3.2, 2.7 / 1.9, 2.2 / 1.5, 1.5 /
//   1.1; 3 x 2048 x 2048 1.18 / 1.05, 2 x 512 x 512 1.18 / 1.35, 1 x 256 x
//   256 1.31 / 1.34. From 4 rows the tile kernel's full tile wins while B
//   stays in cache: 4 x 2048 x 2048 0.87 / 0.90, 4 x 4096 x 1024 0.80 /
//   0.87, 4 x 1024 x 1024 0.99 / 0.91, 6 and 8 x 2048 x 2048 0.81 / 0.85,
//   0.80 / 0.81, 8 x 1024 x 1024 0.83 / 0.85, 5 x 512 x 512 0.74 / 0.75;
//   at 4096 x 4096 M = 4, 5, 6, 8 1.5 / 1.1, 1.50 / 1.37, 1.43 / 1.27,
//   1.31 / 1.17. So from 4 rows there only from kRawBLargeBytes of B.
// From 9 rows (QLinear u8 as above, 1 / 2 threads): under avx2 B of 1 MB or
// more gains, 9 and 12 x 2048 x 2048 1.26 / 1.22, 1.08 / 1.11, 10, 12, 16
// x 4096 x 4096 1.56 / 1.51, 1.25 / 1.29, 1.24 / 1.19, 16 x 1024 x 1024
// 1.03 / 1.13, while smaller B reads 0.84-1.06 (12 x 256 x 256 0.94 / 0.93,
// 16 x 256 x 1024 0.97 / 1.00, 14 x 768 x 768 1.03 / 0.84, 16 x 512 x 512
// 1.04 / 1.06); under avxvnni even 16 MB loses (16 x 4096 x 4096 0.78 /
// 0.78, 12 rows 1.03 / 0.92).
// Since the AVX2 tiles read B as bytes (int8_tile_avx2.cpp), packing in the
// tasks writes half as much, and from 12 rows it wins again below
// kRawBLargeBytes. Measured on Zen 1 (AVX2 only; QLinear u8, unpacked, 3
// interleaved rounds, 1 / 2 threads, tiles / raw-B): 12 x 1024 x 1024 1.05
// / 1.06, 14 x 1024 x 1024 1.02 / 1.02, 16 x 1024 x 1024 1.08 / 1.23,
// 12 x 4096 x 1024 1.02 / 1.06, 16 x 4096 x 1024 1.01 / 1.06, 12 and 16 x
// 2048 x 2048 1.10 / 1.21, 1.05 / 1.22; while 9 to 11 rows still lose or
// tie (9 x 1024 x 1024 0.92 / 0.92, 9, 10, 11 x 2048 x 2048 0.91 / 0.90,
// 0.98 / 1.01, 0.98 / 0.98) and 8 MB and more loses from 12 rows too (12
// and 16 x 2048 x 4096 0.87 / 0.89, 0.84 / 0.82; 16 x 4096 x 4096 0.84 /
// 0.91). So 1 MB from 9 to 11 rows, kRawBLargeBytes from 12 -- until the
// kernels folded za' into A (raw_b_small_m_avx2.cpp) and ran 1.05-1.38x as
// fast. Then, tiles against raw-B again (QLinear u8 and MatMulInteger,
// unpacked, 3 interleaved rounds, 1 / 2 threads, raw-B / tiles): 9 x 256 x
// 256 1.11-1.15 / 1.11-1.15, 10 x 2048 x 2048 1.35-1.36 / 1.32-1.33, 12 x
// 256 x 256 0.99-1.03 / 0.98-1.04, 12 x 2048 x 2048 1.26-1.27 / 1.23-1.27,
// 14 x 768 x 768 1.02-1.04 / 0.99, 16 x 256 x 1024 0.98-1.01 / 0.95-0.97,
// 16 x 512 x 512 1.00-1.02 / 1.00-1.02; in 2 rounds (QLinear u8) 9, 12, 16
// x 1024 x 1024 1.10 / 1.06, 1.02 / 0.99, 1.03 / 0.99, 16 x 2048 x 2048
// 1.04 / 1.03, 12 x 4096 x 1024 1.05 / 1.00. So any B up to 16 rows,
// kRawBLargeBytes from 17 (not measured again).
// - QMATMUL_ISA=avx512bw (the same int16 packing in zmm tile kernels, about
//   1.3x the AVX2 tiles here), against the AVX2 raw-B kernels (QLinear u8, 3
//   interleaved rounds, 1 / 2 threads, tiles / raw-B): 4 x 1024 x 1024 0.90 /
//   0.84, 4 x 4096 x 4096 1.04 / 1.05; 8 x 1024 x 1024 1.09 / 1.21, 8 x 2048
//   x 2048 0.97 / 1.00, 8 x 4096 x 4096 1.04 / 1.02; 12 and 16 x 2048 x 2048
//   and 16 x 1024 x 1024 1.27-1.29 / 1.30-1.40; 12 x 4096 x 4096 0.81 /
//   1.00, 16 x 4096 x 4096 0.96 / 1.16. So any B up to 4 rows,
//   kRawBLargeBytes from 5 to 16, never from 17.
int64_t raw_b_min_bytes_avx2(kernels::Isa isa, int64_t m) {
  if (m < 1 || m > kMaxRowsAvx2) return -1;
  switch (isa) {
    case kernels::Isa::Avx2: return m <= kMaxRowsOwnKernel ? 0 : kRawBLargeBytes;
    case kernels::Isa::AvxVnni: return m <= 3 ? 0 : m <= 8 ? kRawBLargeBytes : -1;
    case kernels::Isa::Avx512Bw: return m <= 4 ? 0 : m <= kMaxRowsOwnKernel ? kRawBLargeBytes : -1;
    default: return -1;  // AVX-512 VNNI has kernels of its own (raw_b_min_bytes); portable none
  }
}

// The narrow form at 1 row (kMaxRowsNarrowAvx2) where the CPU splits 256-bit
// operations. Measured on Zen 1 against the 16-column form (QLinear u8,
// unpacked, 5 interleaved rounds, 1 / 2 threads): 1 row 1.04 / 1.04 at
// 4096 x 4096, 1.13 / 1.07 at 4096 x 4160, 1.17 / 1.12 at 1024 x 1024,
// 1.10 / 1.01 at 4096 x 11008. With more rows it did not gain: 2 rows
// 0.94-0.96 at 4096 x 4096 and 1.01-1.02 at 2048 x 2048, 3 and 4 rows
// 0.99-1.05 (3 and 4 x 4096 x 4096, 3 x 4096 x 4160, 4 x 1024 x 1024);
// from 5 rows, where the sums go through L1 a row at a time and the narrow
// chunk loads and stores them twice as often, 0.88-0.93 (5, 6, 8, 12, 16 x
// 4096 x 4096, 6 and 12 x 4096 x 4160, 8 x 1024 x 1024, 2 rounds).
RawBSmallMFn raw_b_small_m_avx2_for(int m, bool splits_256) {
  if (splits_256)
    if (const RawBSmallMFn narrow = raw_b_small_m_avx2_narrow_fn(m)) return narrow;
  return raw_b_small_m_avx2_fn(m);
}

RawBSmallMFn raw_b_small_m_kernel(kernels::Isa isa, int64_t m, int64_t K, int64_t N) {
  if (isa == kernels::Isa::Amx && m > kMaxRowsAmx) return nullptr;
  isa = raw_b_isa(isa);
  if (isa != kernels::Isa::Avx512Vnni) {  // the AVX2 kernels, where raw_b_min_bytes_avx2 says so
    const int64_t min_bytes = raw_b_min_bytes_avx2(isa, m);
    if (min_bytes < 0 || K * N < min_bytes) return nullptr;
    return raw_b_small_m_avx2_for(static_cast<int>(m), cpu::features().splits_256);
  }
  if (m < 1 || m > kMaxRows || K * N < raw_b_min_bytes(m)) return nullptr;
  return raw_b_small_m_avx512vnni_fn(static_cast<int>(m), K * N >= kRawBLargeBytes);
}

const char* raw_b_small_m_name(kernels::Isa isa, int64_t m, int64_t K, int64_t N) {
  // "u8s8_rawb_{m}x64c4__avx512vnni" (raw_b_small_m_avx512vnni.cpp), and the
  // large-B form where it is a kernel of its own; under AVX2 and AVX-VNNI
  // "u8s8_rawb_{m}x16c2_int16__avx2" (raw_b_small_m_avx2.cpp), or its
  // narrow form "u8s8_rawb_{m}x8c2_int16__avx2".
  // A family's names for m = 1..last rows, index m - 1.
  const auto names_by_rows = [](int last, const std::string& form) {
    std::vector<std::string> all;
    for (int rows = 1; rows <= last; ++rows) all.push_back("u8s8_rawb_" + std::to_string(rows) + form);
    return all;
  };
  static const std::vector<std::string> names = names_by_rows(kMaxRows, "x64c4__avx512vnni");
  static const std::vector<std::string> large_b_names = names_by_rows(kMaxRows, "x64c4__avx512vnni (large-B form)");
  static const std::vector<std::string> avx2_names = names_by_rows(kMaxRowsAvx2, "x16c2_int16__avx2");
  static const std::vector<std::string> avx2_narrow_names = names_by_rows(kMaxRowsNarrowAvx2, "x8c2_int16__avx2");
  const RawBSmallMFn kernel = raw_b_small_m_kernel(isa, m, K, N);
  if (kernel == nullptr) return nullptr;
  isa = raw_b_isa(isa);
  if (isa != kernels::Isa::Avx512Vnni) {
    const bool narrow = kernel == raw_b_small_m_avx2_narrow_fn(static_cast<int>(m));
    return (narrow ? avx2_narrow_names : avx2_names)[static_cast<std::size_t>(m - 1)].c_str();
  }
  const bool own_large_b_form = kernel != raw_b_small_m_avx512vnni_fn(static_cast<int>(m));
  return (own_large_b_form ? large_b_names : names)[static_cast<std::size_t>(m - 1)].c_str();
}

bool raw_b_has_own_large_b_form(int m) {
  const RawBSmallMFn large_b = raw_b_small_m_avx512vnni_fn(m, true);
  return large_b != nullptr && large_b != raw_b_small_m_avx512vnni_fn(m);
}

RawBSmallMFn raw_b_small_m_for(const GemmProblem& p) {
  if (p.b != nullptr || p.b_raw == nullptr || p.kernel == nullptr) return nullptr;
  return raw_b_small_m_kernel(p.kernel->isa, p.M, p.K, p.N);
}

namespace {

// True when each 32-column tile's epilogue parameters are prepared
// (prepare_panel): QLinearMatMul whose parameters do not vary along the
// columns, as the tiled driver does. After a thread's first tile only the
// column term changes, and the epilogue's prepared path neither recomputes
// the multipliers (a float division a column) nor gathers the parameters for
// every tile. Measured on Zen 1 against the general path (QLinear u8,
// unpacked, 3-5 interleaved rounds, 1 / 2 threads): 32 batches of 1 x 128 x
// 1024 1.11-1.12 / 1.12-1.16, 64 batches of 8 x 64 x 64 1.12-1.19 / 1.12, 32
// of 1 x 1024 x 128 1.01 / 1.02, 4 x 1024 x 4096 1.02, 1, 2, 8, 16 x 4096 x
// 4096 0.99-1.01. MatMulInteger keeps the general path: its int32 tiles
// gained nothing (0.97-1.00 in the first rounds, the same within noise
// after).
bool prepares_tiles(const GemmProblem& p) {
  return p.output != OutputKind::Int32 && params_shared_by_columns(p);
}

// A' of batch `batch` as the kernels read it: each row of A mapped into the
// u8 domain and zero padded to kp (rows kp apart), its row sum, and its
// za' (problem.h).
void prepare_a_rows(const GemmProblem& p, int64_t batch, int64_t kp, uint8_t* a_rows, int32_t* row_sums,
                    int32_t* a_zero) {
  const auto* a = static_cast<const unsigned char*>(p.a) + p.a_index[batch] * p.M * p.K;
  for (int64_t i = 0; i < p.M; ++i) {  // one row at a time: rows kp apart
    pack_a_rows(kRowsOfA, a + i * p.K, p.a_type, 1, p.K, a_rows + i * kp, row_sums + i);
    a_zero[i] = *p.a_zero_point.at(batch, i, 0);
  }
}

// K split between the threads (AVX2 kernels, one batch, N up to
// kBlockColsFullRows, up to kFullRowsMaxRows rows): thread q runs the
// kernel over its own run of B's rows, k in [kq, kq+1), across every
// column, into sums of its own; after a barrier each thread adds the parts
// for its share of the columns and runs the epilogue there. Each thread
// then reads whole rows of B, a step's 8 rows one contiguous stretch of
// memory, where the split by columns had both threads read halves of the
// same rows. The parts are exact int32 sums, so adding them gives the same
// C as one pass over K: results do not depend on the thread count.
// Measured on Zen 1 (AVX2 only; QLinear u8, unpacked, qmatmul bench
// without oneDNN, 2 threads, interleaved rounds, K split / column blocks):
// 1, 2, 3, 4, 8 x 4096 x 4096 1.09-1.26, 1.06-1.10, 1.05, 1.05, 1.02;
// 2 x 11008 x 4096 1.14, 4 x 1024 x 4096 1.06, 1 and 2 x 2048 x 2048
// 1.06-1.08, 1.01-1.04, 8 x 2048 x 2048 1.05; with B in L2 or L3 about
// even (1, 2, 4 x 1024 x 1024 0.97-1.02, 8 x 1024 x 1024 1.02 in 5 rounds,
// 0.82 in 4 others; 1 x 4096 x 1024 1.04). Each part cut into the column
// blocks one thread would take (raw_b_block_cols) read 0.92-1.02 against
// whole rows. Not from 9 rows (10, 12, 16 x 4096 x 4096 and 16 x 2048 x
// 2048: 1.00-1.03), nor past N = 4096, where each part would read its rows
// in blocks: the kernel alone at 4096 x 11008 read 0.81-0.97 split by K
// against one block of 5504 columns per thread. Only 2 threads were
// measured (the machine has 2 cores).
constexpr int64_t kSplitKMinPart = 256;  // k per thread at least

int split_k_parts(const GemmProblem& p) {
  if (p.threads < 2 || p.batches != 1 || raw_b_isa(p.kernel->isa) == kernels::Isa::Avx512Vnni) return 1;
  if (p.M > kFullRowsMaxRows || p.N > kBlockColsFullRows) return 1;
  return static_cast<int>(std::clamp<int64_t>(p.K / kSplitKMinPart, 1, p.threads));
}

void run_raw_b_split_k(const GemmProblem& p, RawBSmallMFn kernel, int parts) {
  const int64_t kp = raw_b_a_row_stride(p.K), lines = (p.N + 63) / 64, ld = (lines | 1) * 64;
  const int64_t part_ints = (p.M + 1) * ld;  // a part's sums, then its column sums
  AlignedBuffer sums(static_cast<std::size_t>(parts * part_ints) * sizeof(int32_t));
  auto* all = static_cast<int32_t*>(sums.data());
  const unsigned char b_flip = b_domain_shift(p.b_type) != 0 ? 0x80 : 0;
  const TileEpilogueFn epilogue = tile_epilogue_for(*p.kernel);
  const bool prepare_tiles = prepares_tiles(p);
  const auto* b = static_cast<const unsigned char*>(p.b_raw) + p.b_index[0] * p.K * p.N;
  // Part q starts at a whole kernel step (8 rows of B); only the last part
  // can end on an odd k.
  const auto part_begin = [&](int64_t q) { return q == parts ? p.K : p.K * q / parts / 8 * 8; };
  const int64_t tiles = (p.N + kTileCols - 1) / kTileCols;
  // A' over the whole of K, once, read by every part (each from its k0).
  std::vector<uint8_t> a_rows(static_cast<std::size_t>(p.M * kp));
  std::vector<int32_t> row_sums(static_cast<std::size_t>(p.M)), a_zero(static_cast<std::size_t>(p.M));
  prepare_a_rows(p, 0, kp, a_rows.data(), row_sums.data(), a_zero.data());

  run_tasks_region(parts, parts, [&] {
#pragma omp for schedule(static)  // one part per thread; the loop's barrier ends the first phase
    for (int64_t q = 0; q < parts; ++q) {
      const int64_t k0 = part_begin(q), k1 = part_begin(q + 1);
      int32_t* acc = all + q * part_ints;
      kernel(a_rows.data() + k0, static_cast<int>(p.M), kp, a_zero.data(), b + k0 * p.N, k1 - k0, p.N, p.N, b_flip,
             acc, ld, acc + p.M * ld);  // the AVX2 kernels put column 0 at index 0 (no shift)
    }
    PanelParams panel;  // prepared per tile when prepare_tiles, else the epilogue's general path
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t j = t * kTileCols, cols = std::min(kTileCols, p.N - j);
      int32_t* acc = all + j;
      for (int q = 1; q < parts; ++q) {  // rows of sums, then the column sums (row M)
        const int32_t* part = all + q * part_ints + j;
        for (int64_t i = 0; i <= p.M; ++i)  // int32 wrapping, as the kernels' vpaddd (SEMANTICS.md)
          for (int64_t c = 0; c < cols; ++c)
            acc[i * ld + c] = static_cast<int32_t>(static_cast<uint32_t>(acc[i * ld + c]) +
                                                   static_cast<uint32_t>(part[i * ld + c]));
      }
      const Tile tile{0, 0, j, static_cast<int>(p.M), static_cast<int>(cols)};
      if (prepare_tiles) prepare_panel(p, 0, j, static_cast<int>(cols), acc + p.M * ld, true, panel);
      epilogue(p, tile, acc, ld, row_sums.data(), acc + p.M * ld, panel);
    }
  });
}

}  // namespace

void run_raw_b_small_m(const GemmProblem& p, RawBSmallMFn kernel) {
  if (const int parts = split_k_parts(p); parts > 1) {
    run_raw_b_split_k(p, kernel, parts);
    return;
  }
  // Blocks of about raw_b_block_cols' width (the nearest count of them), at
  // least one per thread where each still keeps kMinBlockCols columns, in a
  // count that splits evenly over the threads (balanced_block_count). One
  // block per thread, not two: from kRawBLargeBytes the width is the point
  // (2048 columns at 2 threads and N = 4096 against 1024, QLinear u8,
  // unpacked, no oneDNN, 6 interleaved rounds: M = 1, 4, 6, 8, 16 1.19,
  // 1.41, 1.34, 1.26, 1.04, 4-6 wins of 6), and below it the rule before,
  // which halved the width until every thread had two blocks, gained
  // nothing where it applied (2 threads, 4 rounds, one block against two:
  // 2 x 1024 x 2048 1.06, 4 x 1024 x 1024 0.99). The static schedule never
  // moves a thread's second block to the other thread. (That measurement
  // predates the narrow widths that raw_b_block_cols now gives the AVX-512
  // VNNI kernel from 5 rows on two threads: there each thread takes several
  // blocks, so that their sums stay in L1, and that gained 1.11-1.30.)
  const int64_t b_bytes = p.K * p.N;
  // Block edges on B's 64-byte lines when every row has the same alignment
  // (N % 64 == 0): only the first block then starts inside a line (the
  // kernel shifts it back), and no block reads a line it shares with the
  // next one. Column j of B sits at offset + j from a line start.
  const int64_t offset =
      p.N % 64 == 0 ? static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(p.b_raw) % 64) : 0;
  const int64_t span = offset + p.N, lines = (span + 63) / 64;
  const int64_t width = raw_b_block_cols(raw_b_isa(p.kernel->isa), p.M, b_bytes, p.threads);
  const int64_t one_per_thread = (p.threads + p.batches - 1) / p.batches;
  const int64_t wanted = std::max((span + width / 2) / width, std::min(one_per_thread, span / kMinBlockCols));
  const int64_t blocks = balanced_block_count(wanted, p.batches, p.threads, lines);
  const int64_t tasks = p.batches * blocks;
  const int64_t block_lines = (lines + blocks - 1) / blocks;  // the widest block's
  const int64_t kp = raw_b_a_row_stride(p.K);
  // Rows of sums: room for block_lines lines of B's columns (a block's
  // width from its first line start), in an odd number of the kernel's
  // 64-column chunks. A chunk is 4 lines of sums, so the rows' chunks then
  // lie 4 x odd lines apart and 16 rows' chunks fill L1's 64 sets once
  // (2048-column blocks: 2112 columns a row); at 2176 (2048 + 128), the
  // width an extra line first gave the widest of two blocks at N = 4096
  // when B starts inside a line, two rows shared each set and 16 x 4096 x
  // 4096 at 2 threads ran 0.79x (QLinear u8, unpacked, 4 rounds).
  const int64_t ld = (block_lines | 1) * 64;
  const unsigned char b_flip = b_domain_shift(p.b_type) != 0 ? 0x80 : 0;
  const TileEpilogueFn epilogue = tile_epilogue_for(*p.kernel);
  const bool prepare_tiles = prepares_tiles(p);
  const bool same_every_batch = prepare_tiles && params_shared_by_batches(p);

  run_tasks_region(p.threads, tasks, [&] {
    std::vector<uint8_t> a_rows(static_cast<std::size_t>(p.M * kp));
    std::vector<int32_t> row_sums(static_cast<std::size_t>(p.M));
    std::vector<int32_t> a_zero(static_cast<std::size_t>(p.M));  // za' of each row, for the folded form
    AlignedBuffer sums(static_cast<std::size_t>((p.M + 1) * ld) * sizeof(int32_t));
    auto* acc = static_cast<int32_t*>(sums.data());
    int32_t* col_sums = acc + p.M * ld;
    PanelParams panel;  // prepared per tile when prepare_tiles, else the epilogue's general path
    int64_t prepared_for = -1;  // output batch whose A rows are in a_rows

#pragma omp for schedule(static)  // the same column blocks per thread on every call (parallel_region.h)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t batch = task / blocks, block = task % blocks;
      const int64_t j_begin = std::max<int64_t>(0, balanced_block_begin(block, blocks, lines) * 64 - offset);
      const int64_t cols = std::min(p.N, balanced_block_begin(block + 1, blocks, lines) * 64 - offset) - j_begin;
      if (prepared_for != batch) {
        prepare_a_rows(p, batch, kp, a_rows.data(), row_sums.data(), a_zero.data());
        prepared_for = batch;
      }
      const auto* b = static_cast<const unsigned char*>(p.b_raw) + p.b_index[batch] * p.K * p.N + j_begin;
      const int64_t shift =
          kernel(a_rows.data(), static_cast<int>(p.M), kp, a_zero.data(), b, p.K, p.N, cols, b_flip, acc, ld, col_sums);
      for (int64_t j = 0; j < cols; j += kTileCols) {
        const Tile tile{batch, 0, j_begin + j, static_cast<int>(p.M), static_cast<int>(std::min(kTileCols, cols - j))};
        if (prepare_tiles)
          prepare_panel(p, batch, tile.j0, tile.cols, col_sums + shift + j, same_every_batch, panel);
        epilogue(p, tile, acc + shift + j, ld, row_sums.data(), col_sums + shift + j, panel);
      }
    }
  });
}

}  // namespace qmatmul::gemm

// The driver splits one call into independent tasks, each a block of MC rows of
// one output batch times a range of NR-column panels, and runs them in one
// OpenMP parallel region (none with one thread: parallel_region.h). A worker
// packs its A rows once (with their row sums) and reuses them across the task's
// panels, or, when no row sums are needed, lets the kernel read them in place;
// for each panel it walks the MR-row tiles, calls the microkernel over the
// whole K into an L1 tile buffer and hands the tile to the epilogue (a last
// tile of fewer rows runs the ISA's small-M kernel of its height when there is
// one, on rows packed in that kernel's layout, instead of MR rows with zero
// padding); a MatMulInteger tile whose only correction is the per-column -za' *
// colsum term is finished by the kernel itself (its col_init) straight into the
// output, and a QLinearMatMul tile in that case too, by the kernel's
// requantizing form where it has one (else the kernel adds the term and the
// epilogue only requantizes). With int32 output and a long k loop, the driver
// asks for each row tile's output lines one tile ahead (prefetch_output_rows).
// With packed B, the panel's first tiles also prefetch the next panel (the
// kernels' prefetch hint); with a single row tile per panel (few rows), a
// kernel's two-panel form computes two panels per call, streaming both at once,
// and the other kernels ask for B a page ahead of their reads.
// B comes packed (constant weights, or a large M that reuses every panel many
// times), or raw: then each task packs its panels a group at a time just before
// using them; or, raw with M <= 16 (AVX-512 VNNI and AVX2; AVX-VNNI M <= 8) and
// a B too large to stay in cache, B is not packed at all (raw_b_small_m.h:
// raw_b_small_m_kernel). Every output element is computed by exactly one kernel
// call with the same reduction, so the result is identical for any thread
// count.
#include "gemm/driver.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gemm/epilogue.h"
#include "gemm/parallel_region.h"
#include "gemm/raw_b_small_m.h"
#include "kernels/dispatch.h"

namespace qmatmul::gemm {
namespace {

// Rows per task: enough to amortise packing, small enough that the packed
// A block stays in L2 while the task's panels stream past it. With B raw
// and all of M in one row block, each task packs B a group of panels at a
// time into an L2 buffer that the kernel reads right away (pack_b_in_tasks);
// otherwise B is packed whole before the tasks start, written out and read
// back from L3 or memory. So with in-task packing the block may be much
// larger, up to 2 MB (in L3, read once per panel): measured with B raw,
// 1 / 2 threads, the AVX2 kernel (int16 A', 8 KB a row at K = 4096) at
// 128x4096x4096 runs 4-7% / 14-16% faster in one 128-row block than with
// B packed first (the former 512 KB limit); the VNNI kernel, whose blocks
// were already single at the default shapes, is unchanged there.
// The AMX tiles take at least 4 row tiles (128 rows) a block whatever K:
// each block streams all of its B columns, and at K = 4096 the 256 KB
// budget gave 64 rows, two 32-row tiles per panel read. Measured with
// packed B against that (MatMulInteger u8, 3 interleaved rounds, 1 / 2
// threads): 128 x 4096 x 4096 1.15 / 1.18, 256 x 4096 x 4096 1.10 / 1.10,
// 64 x 8192 x 1024 1.31 / 1.32, 128 x 8192 x 2048 1.31 / 1.36. A 1 MB
// budget instead lost at K <= 2048 (2048^3, 512 x 1024 x 4096: 0.84-0.87).
int64_t rows_per_task(const kernels::Int8GemmKernel& k, int64_t M, int64_t K, bool in_task_packing) {
  const int64_t bytes_per_row = std::max<int64_t>(1, K) * kernels::a_element_bytes(k);
  int64_t rows = (in_task_packing ? 2048 * 1024 : 256 * 1024) / bytes_per_row;
  rows = std::clamp<int64_t>(rows, k.isa == kernels::Isa::Amx ? 4 * k.mr : k.mr, 512);
  const int64_t m_rounded = (M + k.mr - 1) / k.mr * k.mr;
  if (rows >= M) return m_rounded;  // one block, in whole tiles
  return rows / k.mr * k.mr;
}

// The prefetch region (the kernels' hint, int8_kernel.h) for the only row
// tile of a packed panel (M <= MR), whose kernel then streams B from memory
// panel after panel (they lie back to back): B itself, one 4 KB page ahead
// of the tile's reads, so that each page is asked for before the reads reach
// it (the hardware prefetchers follow a stream within a page, not into the
// next one). Past the last panel the lines are only requested, never read.
// Measured on Zen 1 (AVX2, QLinear u8, packed B, 3 interleaved rounds, 1 / 2
// threads) against no prefetch: M = 1, 2, 3 x 4096 x 4096 1.25 / 1.29, 1.18
// / 1.17, 1.12 / 1.09, 4 to 6 rows 1.03-1.08 / 1.04-1.08, 1 x 4096 x 11008
// 1.20 / 1.30; B in L3 or L2 (2 x 1024 x 4096, 2 x 512 x 1024) 1.00-1.02.
// 6 and 8 KB ahead read the same as 4 KB (within 0.95-1.05). For more rows
// than a tile the next-panel prefetch stays: this one in its place, for
// the first tile, read 0.89-1.02 at 7, 8, 12 and 16 rows.
inline const void* stream_ahead_prefetch(const void* b_panel) {
  constexpr int64_t kStreamAheadBytes = 4096;
  return static_cast<const unsigned char*>(b_panel) + kStreamAheadBytes;
}

// Asks for the lines of int32 output that a row tile is about to write
// (rows rows of cols elements, ld elements apart), one tile ahead of its
// stores. A tile's output rows are N elements apart, each a line of its
// own last touched a call ago, so its stores miss; the tiles after them
// ran slower (MatMulInteger with the tiles stored to an L1 buffer instead,
// as a probe: 1.14-1.38x at K = 256-1024). Measured when it was added,
// packed and raw B, 1 and 2 threads, 5 interleaved rounds with oneDNN's
// sides: 1.07-1.11 at 512 x 1024 x 4096, 1.01-1.06 at 2048^3, 1.23-1.49 at
// 512 x 256 x 4096, 0.93-1.05 (noise) at 16 x 4096 x 4096, 128 x 4096 x
// 4096 and 128 x 768 x 768. Not for QLinearMatMul's byte output, whose
// tiles write half lines: 0.94-0.99. Only from kPrefetchOutputMinK: a
// later day on the same kind of machine, its 16 requests per tile cost
// more than they saved wherever a tile's k loop is short (ratio to oneDNN
// in the same run, without against with, medians of 3-5 interleaved
// rounds, 1 / 2 threads, raw and packed B): 12 batches of 128 x 64 x 128
// 1.12-1.15, of 197 x 64 x 197 1.07-1.11, 256 x 512 x 2048 1.02-1.07, 512
// x 256 x 4096 1.00 / 1.03-1.07, 128 x 768 x 768 0.99-1.05; at K = 1024
// it still paid (512 x 1024 x 4096 0.96-0.99), from K = 2048 even (2048^3,
// 128 x 4096 x 4096 0.98-1.00).
constexpr int64_t kPrefetchOutputMinK = 1024;
void prefetch_output_rows(const int32_t* y, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i) {
    const auto first = reinterpret_cast<std::uintptr_t>(y + i * ld), end = first + cols * sizeof(int32_t);
    for (std::uintptr_t line = first & ~std::uintptr_t{63}; line < end; line += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(line), 1, 3);
  }
}

// True when every zb' of the call is 0: then no term uses A's row sums
// (zero_point.h), so A needs no packing pass for them. A zero point that
// varies along B's rows is never expected; it answers false.
bool b_zero_points_all_zero(const GemmProblem& p) {
  const ParamSpan<int32_t>& zb = p.b_zero_point;
  if (zb.row_stride != 0) return false;
  const int64_t cols = zb.col_stride == 0 ? 1 : p.N;
  for (int64_t batch = 0; batch < p.batches; ++batch)
    for (int64_t j = 0; j < cols; ++j)
      if (*zb.at(batch, 0, j) != 0) return false;
  return true;
}

// Rows split into `count` blocks of nearly equal height in whole MR-row
// tiles; the rounding up to whole tiles can leave fewer blocks than asked
// for (count is then the blocks there are, none of them empty).
struct RowBlocks {
  int64_t count, height;
};
RowBlocks row_blocks(int64_t M, int64_t mr, int64_t count) {
  const int64_t height = ((M + count - 1) / count + mr - 1) / mr * mr;
  return {(M + height - 1) / height, height};
}

// True when a call's threads share its rows and not its columns: from 2
// threads, A with at least twice as many rows as B has columns, and B of
// at most 256 KB (each thread then reads all of B, from its own L2). With
// the columns split, each thread packed every row of A, and at N = 64 that
// pass took about as long as the products. Measured (MatMulInteger u8 x
// s8, 2 threads, 4 interleaved rounds, against the column split): 2364 x
// 197 x 64 1.53 (12 batches of 197 x 197 over one B, folded, 1.35), 512 x
// 128 x 128 1.62, 512 x 128 x 256 1.45, 2048 x 256 x 1024 1.26, 1024 x 64
// x 512 1.27, 256 x 256 x 128 1.17, 1000 x 512 x 96 1.10, 4096 x 256 x 64
// and 512 x 1024 x 128 1.00-1.04. Beyond the bounds it gained nothing or
// lost: at M = N 0.84-1.01 (768^3 0.84), and with B of 512 KB and more
// 0.97-0.99 (1024 x 1024 x 512, 2048 x 2048 x 256, 1536 x 768 x 768).
bool rows_split_only(const GemmProblem& p) {
  constexpr int64_t kMaxBBytes = 256 * 1024;
  return p.threads > 1 && p.M >= 2 * p.N && p.K * p.N <= kMaxBBytes;
}

}  // namespace

bool pack_b_in_tasks(const kernels::Int8GemmKernel& kernel, int64_t M, int64_t K, int64_t batches,
                     int64_t b_batches) {
  return batches == b_batches && rows_per_task(kernel, M, K, true) >= M;
}

void run_int8_gemm(const GemmProblem& p) {
  if (p.batches == 0 || p.M == 0 || p.N == 0) return;
  const kernels::Int8GemmKernel& kern = *p.kernel;
  const bool in_task_packing = p.b == nullptr;  // B raw: each task packs its panels
  if (const RawBSmallMFn raw_b = raw_b_small_m_for(p)) {
    run_raw_b_small_m(p, raw_b);  // M <= 16 and B large enough: B read directly, never packed
    return;
  }
  // Row blocks of nearly equal height (whole tiles, at most rows_per_task):
  // the static schedule below cannot move work between threads, and full
  // blocks with a short last one left a thread idle at the end. Every
  // block keeps at least one row (row_blocks).
  const int64_t max_rows = rows_per_task(kern, p.M, p.K, in_task_packing);
  RowBlocks m_split = row_blocks(p.M, kern.mr, (p.M + max_rows - 1) / max_rows);
  const int64_t panels = (p.N + kern.nr - 1) / kern.nr;
  // Split the columns only as far as needed to give every thread work, in
  // blocks that the threads share evenly (balanced_block_count). In-task
  // packing packs panels in pairs (whole 64-byte lines of each B row for
  // NR = 32); an odd panel per block would go through the single-panel
  // packer, half as fast per byte, so its blocks take whole pairs.
  // But not when A outgrows a small B (rows_split_only): each thread packs
  // every row of A that its column blocks meet, so with the columns split
  // the threads packed all of A each, for a few panels of work per row.
  const int64_t want = 4 * static_cast<int64_t>(p.threads);
  const int64_t panels_per_unit = in_task_packing ? 2 : 1;
  const int64_t units = (panels + panels_per_unit - 1) / panels_per_unit;
  const int64_t first_row_tasks = p.batches * m_split.count;
  const int64_t wanted_blocks = first_row_tasks >= want ? 1 : (want + first_row_tasks - 1) / first_row_tasks;
  const int64_t n_blocks =
      rows_split_only(p) ? 1 : balanced_block_count(wanted_blocks, first_row_tasks, p.threads, units);
  // When the tasks do not split evenly over the threads (the rows alone, or
  // the columns ran out first), the rows split further, into the fewest
  // blocks that do (whole tiles permitting).
  const int64_t tiles = (p.M + kern.mr - 1) / kern.mr;
  for (int64_t count = m_split.count + 1; (p.batches * m_split.count * n_blocks) % p.threads != 0 && count <= tiles;
       ++count) {
    const RowBlocks more = row_blocks(p.M, kern.mr, count);
    if ((p.batches * more.count * n_blocks) % p.threads == 0) m_split = more;
  }
  const int64_t m_blocks = m_split.count, mc = m_split.height;
  const int64_t row_tasks = p.batches * m_blocks;
  const auto block_begin = [&](int64_t n_block) {
    return std::min(panels, balanced_block_begin(n_block, n_blocks, units) * panels_per_unit);
  };
  const int64_t tasks = row_tasks * n_blocks;
  const int64_t kgroups = kgroups_for(kern, p.K);
  const int64_t a_matrix = p.M * p.K;  // elements between A matrices (1 byte each)
  const TileEpilogueFn epilogue = tile_epilogue_for(kern);
  const bool prefetch_output = p.output == OutputKind::Int32 && p.K >= kPrefetchOutputMinK;
  // Every panel's epilogue parameters are prepared when none varies along
  // the columns: after a thread's first panel only the column term changes
  // (prepare_panel's memo), so even a panel of one row tile repays it.
  const bool prepare_every_panel = params_shared_by_columns(p);
  // When none varies by batch either, that memo serves the panels of every
  // batch (params_shared_by_batches reads every batch's offsets: once here).
  const bool same_every_batch = params_shared_by_batches(p);
  // A read in place by the kernel, without a packing pass: uint8 A is
  // already A' (a' = a), int8 A the kernel shifts as it reads it (a' = a xor
  // 0x80, a_flip), and the pass would only compute row sums that no term
  // needs when every zb' is 0. Whole MR-row tiles only; a last partial
  // row tile is packed as usual. When K is not a multiple of KR, a row's
  // last k-group reads a_overread bytes past the row's end: they meet the
  // rows of B' past K, which packing writes as zeros, so they add nothing.
  // They are the next rows' first bytes; the tiles too near a matrix's end
  // for that (its last row, or more at K < 3) are packed instead, since the
  // read could leave the buffer. Against packing A at such K (MatMulInteger,
  // B raw, 4 interleaved rounds, 1 / 2 threads): 12 batches of 197 x 197 x
  // 64 1.20 / 1.11, 2364 x 197 x 64 1.22, 512 x 1023 x 512 1.02 / 1.09, 256
  // x 4095 x 256 1.04, 128 x 765 x 768 1.06. int8 A (QLinearMatMul s8 x s8,
  // packed B, 5 rounds, 1 / 2 threads): 12 batches of 197 x 197 x 64 1.14 /
  // 1.22, of 128 x 128 x 64 1.13, 128 x 768 x 768 1.01 / 1.03.
  const bool no_row_sums = b_zero_points_all_zero(p);  // then no term reads A's row sums
  const uint8_t a_flip = p.a_type == ElementType::Int8 ? 0x80 : 0x00;
  const bool a_in_place = kern.tile_a_in_place != nullptr && no_row_sums && (a_flip == 0 || kern.a_in_place_int8) &&
                          (kern.a_in_place_max_k == 0 || p.K <= kern.a_in_place_max_k);
  const int64_t a_overread = (kern.kr - p.K % kern.kr) % kern.kr;
  // In-task packing: panels packed a group at a time, into a buffer of at
  // most about 512 KB (it stays in L2 for the kernel): an even number of
  // panels, so that each B row is read in whole 64-byte lines for NR = 32,
  // and as many as fit, so that the row segments are long.
  const std::size_t panel_bytes = packed_panel_bytes(kern, kgroups);
  const int64_t prefetch_region = kgroups * kernels::prefetch_bytes_per_kgroup(kern);  // per tile (int8_kernel.h)
  // Whether a tile's region is as long as its panel, so that one line of it
  // is touched per line of B read (AVX2, AVX-VNNI): the condition for
  // stream_ahead_prefetch to stay a fixed distance ahead of the reads.
  const bool covers_panel = prefetch_region == static_cast<int64_t>(panel_bytes);
  const int64_t kPackPanels = std::clamp<int64_t>(static_cast<int64_t>((512 * 1024) / std::max<std::size_t>(panel_bytes, 1)) / 2 * 2, 2, 32);

  run_tasks_region(p.threads, tasks, [&] {
    kernels::begin_tile_calls(kern);  // the AMX tile configuration (the tail kernels need no setup)
    // The packing buffers are kept by each pool thread between calls: fresh
    // pages (a block of A is up to 2 MB) would fault in on every call.
    thread_local AlignedBuffer packed_a;
    if (packed_a.size() < packed_a_bytes(kern, mc, p.K)) packed_a.resize(packed_a_bytes(kern, mc, p.K));
    std::vector<int32_t> row_sums(static_cast<std::size_t>(mc));
    std::vector<int32_t> acc(static_cast<std::size_t>(kern.mr * kern.nr * (kern.tile_pair != nullptr ? 2 : 1)));
    PanelParams panel_params, pair_params;  // prepare_panel's, for a panel (and its pair's second panel)
    const PanelParams unprepared{};         // row_invariant = false: the epilogue's general path
    thread_local AlignedBuffer packed_b;
    if (in_task_packing && packed_b.size() < kPackPanels * panel_bytes) packed_b.resize(kPackPanels * panel_bytes);
    std::vector<int32_t> packed_sums(in_task_packing ? static_cast<std::size_t>(kPackPanels * kern.nr) : 0);
    int64_t packed_for = -1;  // row task whose A rows are in packed_a
    const unsigned char* a_rows = nullptr;  // that row task's first row of A
    int64_t in_place_rows = 0;              // its rows the kernel reads in place; the rest are packed
    bool pair_tiles = false;                // its single row tile runs the two-panel form (packed A)
    const kernels::Int8GemmKernel* tail = nullptr;  // its last row tile's own kernel, if any
    int64_t full_rows = 0;                  // its rows before that tile (all rows when there is none)
    unsigned char* tail_a = nullptr;        // that tile's packed A block
    const std::size_t a_block_bytes = packed_a_bytes(kern, kern.mr, p.K);

    // A static schedule: each thread takes the same tasks on every call of
    // the same shape, so the B panels, A rows and output lines it touched
    // last time are still in its own caches (parallel_region.h). Tasks
    // run column block by column block: with as many column blocks as
    // threads, each thread takes every row block of its own columns of B,
    // so the threads get equal work however the rows split into blocks.
    // `nowait`: the region's closing barrier follows at once, and a second
    // barrier cost a call 1.3-2 us on a 2-core VM (parallel_region.h).
#pragma omp for schedule(static) nowait
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t n_block = task / row_tasks, row_task = task % row_tasks;
      const int64_t batch = row_task / m_blocks, m_block = row_task % m_blocks;
      const int64_t i_begin = m_block * mc, rows = std::min(mc, p.M - i_begin);
      if (packed_for != row_task) {
        a_rows = static_cast<const unsigned char*>(p.a) + p.a_index[batch] * a_matrix + i_begin * p.K;
        // One row tile (few rows, B streamed once): two panels at a time when
        // the kernel has the two-panel form, which reads packed A.
        pair_tiles = kern.tile_pair != nullptr && rows <= kern.mr;
        in_place_rows = a_in_place && !pair_tiles ? rows / kern.mr * kern.mr : 0;
        while (in_place_rows > 0 && (p.M - i_begin - in_place_rows) * p.K < a_overread) in_place_rows -= kern.mr;
        // A last, partial row tile runs a kernel of its own height when the
        // ISA has one (int8_tail_kernel_for), packed in its own layout after
        // the full blocks, instead of kern over zero-padded rows.
        tail = pair_tiles ? nullptr : kernels::int8_tail_kernel_for(kern, rows % kern.mr);
        full_rows = tail != nullptr ? rows / kern.mr * kern.mr : rows;
        // When every zb' is 0 no term reads the row sums: rows read in
        // place have none, and the packing pass skips them. Measured on Zen
        // 1 with the AVX2 packer taking every tile height (the tail tiles'
        // and few-row calls' rows were packed one value at a time), against
        // both before (MatMulInteger and QLinear u8, packed B, 3-5
        // interleaved rounds, 1 / 2 threads): 12 batches of 197 x 197 x 64
        // and of 128 x 128 x 64 1.01-1.04, 5 x 1024 x 1024 1.07 / 1.10-1.13,
        // 4 x 1024 x 1024 1.04 / 1.10, 1-5 x 4096 x 4096 1.01-1.02 / 1.02-
        // 1.06, 128 x 768 x 768 and 16 x 4096 x 4096 0.99-1.01. They are set
        // to 0 rather than left from a previous task.
        if (no_row_sums) std::fill(row_sums.begin(), row_sums.begin() + rows, 0);
        int32_t* const sums = no_row_sums ? nullptr : row_sums.data();
        pack_a_rows(kern, a_rows + in_place_rows * p.K, p.a_type, full_rows - in_place_rows, p.K, packed_a.data(),
                    sums != nullptr ? sums + in_place_rows : nullptr);
        if (tail != nullptr) {
          tail_a = static_cast<unsigned char*>(packed_a.data()) +
                   static_cast<std::size_t>((full_rows - in_place_rows) / kern.mr) * a_block_bytes;
          pack_a_rows(*tail, a_rows + full_rows * p.K, p.a_type, rows - full_rows, p.K, tail_a,
                      sums != nullptr ? sums + full_rows : nullptr);
        }
        packed_for = row_task;
      }
      const int64_t b_batch = p.b_index[batch];
      const int64_t panel_end = block_begin(n_block + 1);
      const int64_t group = in_task_packing ? kPackPanels : panel_end;
      for (int64_t group_begin = block_begin(n_block); group_begin < panel_end; group_begin += group) {
        const int64_t group_end = std::min(panel_end, group_begin + group);
        if (in_task_packing)
          pack_b_panel_range(kern, static_cast<const unsigned char*>(p.b_raw) + b_batch * p.K * p.N, p.b_type, p.K,
                             p.N, group_begin, group_end, packed_b.data(), packed_sums.data());
        for (int64_t panel = group_begin; panel < group_end; ++panel) {
          const void* b_panel = in_task_packing ? static_cast<const unsigned char*>(packed_b.data()) +
                                                      static_cast<std::size_t>(panel - group_begin) * panel_bytes
                                                : p.b->panel(b_batch, panel);
          const int64_t j0 = panel * kern.nr;
          const int32_t* col_sums = in_task_packing ? packed_sums.data() + (panel - group_begin) * kern.nr
                                                    : p.b->sums(b_batch) + j0;
          const int cols = static_cast<int>(std::min<int64_t>(kern.nr, p.N - j0));
          // Two panels in one call, each half finished by the epilogue as
          // its own tile.
          if (pair_tiles && panel + 1 < group_end) {
            // Panels lie back to back, panel_bytes apart, in PackedB and in
            // the in-task buffer alike.
            const int64_t ld = 2 * kern.nr, j1 = j0 + kern.nr;
            kern.tile_pair(kgroups, packed_a.data(), b_panel, static_cast<int64_t>(panel_bytes), nullptr, acc.data(),
                           ld);
            const int tile_rows = static_cast<int>(rows);
            const int cols1 = static_cast<int>(std::min<int64_t>(kern.nr, p.N - j1));
            if (prepare_every_panel) {
              prepare_panel(p, batch, j0, kern.nr, col_sums, same_every_batch, panel_params);
              prepare_panel(p, batch, j1, cols1, col_sums + kern.nr, same_every_batch, pair_params);
            }
            epilogue(p, Tile{batch, i_begin, j0, tile_rows, kern.nr}, acc.data(), ld, row_sums.data(), col_sums,
                     prepare_every_panel ? panel_params : unprepared);
            epilogue(p, Tile{batch, i_begin, j1, tile_rows, cols1}, acc.data() + kern.nr, ld, row_sums.data(),
                     col_sums + kern.nr, prepare_every_panel ? pair_params : unprepared);
            ++panel;
            continue;
          }
          // Otherwise prepared only when the panel has enough row tiles to
          // repay the scalar preparation (measured: 2 tiles per panel do not).
          const bool prepared = prepare_every_panel || rows >= 4 * kern.mr;
          if (prepared) prepare_panel(p, batch, j0, cols, col_sums, same_every_batch, panel_params);
          const PanelParams& params = prepared ? panel_params : unprepared;
          // MatMulInteger whose only correction is -za' * colsum (zb' = 0,
          // za' the same for all rows): whole tiles are final in the kernel.
          const bool direct = p.output == OutputKind::Int32 && params.row_invariant && params.zb_zero &&
                              cols == kern.nr;
          // The other tiles under the same condition (QLinearMatMul, a
          // partial panel, a tail kernel taller than its rows): the kernel
          // adds the column term into the tile buffer too, and the epilogue
          // only requantizes or copies (Tile::final_sums).
          const bool final_sums = params.row_invariant && params.zb_zero && kern.nr <= kPanelMaxCols;
          // Better still, a kernel with a requantizing form finishes its
          // whole tiles (not a tail kernel's) itself, straight into the
          // output, when every multiplier is finite (the default rounding).
          const bool requant_in_kernel =
              final_sums && kern.tile_requant != nullptr && params.finite_multipliers && cols == kern.nr;
          const kernels::RequantParams requant{params.m, params.y_zero_point, p.output == OutputKind::Uint8,
                                               params.bounded_multipliers, requant_product_exact(p.K)};
          // Packed B: the first row tiles prefetch the next panel, region by
          // region, so that its first tile does not wait on memory. Not with
          // a single row tile per panel (M <= MR): there the kernel streams
          // B itself, and the extra requests only compete with it (measured
          // 5-12% slower at M = 5 and 6).
          const auto* next_panel = !in_task_packing && panel + 1 < panel_end && rows > kern.mr
                                       ? static_cast<const unsigned char*>(p.b->panel(b_batch, panel + 1))
                                       : nullptr;
          // That single tile instead asks for B one page ahead of its own
          // reads (stream_ahead_prefetch).
          const void* ahead = !in_task_packing && rows <= kern.mr && covers_panel ? stream_ahead_prefetch(b_panel)
                                                                                   : nullptr;
          // One row tile: A in place or packed (the packed blocks start at
          // row in_place_rows), or the tail tile with its own kernel.
          const auto packed_block = [&](int64_t r) {
            return static_cast<const unsigned char*>(packed_a.data()) +
                   static_cast<std::size_t>((r - in_place_rows) / kern.mr) * a_block_bytes;
          };
          // A last panel of at most NR/2 columns: its full-height tiles run
          // the kernel's half-width form, which skips the half of the panel
          // that is only zero padding (12 batches of 197 x 64 x 197: 6 whole
          // panels and one of 5 columns).
          const bool half_panel = cols <= kern.nr / 2 && kern.tile_half != nullptr &&
                                  (in_place_rows == 0 || kern.tile_half_a_in_place != nullptr);
          auto run_tile = [&](int64_t r, const int32_t* col_init, int32_t* c, int64_t ldc, const void* prefetch) {
            if (r < in_place_rows)
              (half_panel ? kern.tile_half_a_in_place : kern.tile_a_in_place)(
                  kgroups, a_rows + r * p.K, p.K, a_flip, b_panel, col_init, c, ldc, prefetch);
            else if (r >= full_rows)
              tail->tile(kgroups, tail_a, b_panel, col_init, c, ldc, prefetch);
            else
              (half_panel ? kern.tile_half : kern.tile)(kgroups, packed_block(r), b_panel, col_init, c, ldc,
                                                        prefetch);
          };
          int64_t prefetch_offset = 0;
          for (int64_t r = 0; r < rows; r += kern.mr, prefetch_offset += prefetch_region) {
            if (prefetch_output && r + kern.mr < rows)
              prefetch_output_rows(static_cast<const int32_t*>(p.y) + (batch * p.M + i_begin + r + kern.mr) * p.N + j0,
                                   std::min<int64_t>(kern.mr, rows - r - kern.mr), cols, p.N);
            const void* prefetch = next_panel != nullptr && prefetch_offset < static_cast<int64_t>(panel_bytes)
                                       ? next_panel + prefetch_offset
                                       : ahead;
            const Tile tile{batch, i_begin + r, j0, static_cast<int>(std::min<int64_t>(kern.mr, rows - r)), cols,
                            final_sums};
            // Final values, straight into the output, when the tile's kernel
            // writes just its rows (a tail kernel may have more rows than
            // the tail).
            const int kernel_rows = r >= full_rows ? tail->mr : kern.mr;
            if (direct && tile.rows == kernel_rows) {
              int32_t* y = static_cast<int32_t*>(p.y) + (batch * p.M + tile.i0) * p.N + j0;
              run_tile(r, params.column_term, y, p.N, prefetch);
              continue;
            }
            if (requant_in_kernel && r < full_rows && tile.rows == kern.mr) {
              auto* y = static_cast<unsigned char*>(p.y) + (batch * p.M + tile.i0) * p.N + j0;
              if (r < in_place_rows)
                kern.tile_requant(kgroups, a_rows + r * p.K, p.K, a_flip, b_panel, params.column_term, requant, y,
                                  p.N, prefetch);
              else
                kern.tile_requant(kgroups, packed_block(r), 0, 0, b_panel, params.column_term, requant, y, p.N,
                                  prefetch);
              continue;
            }
            run_tile(r, final_sums ? params.column_term : nullptr, acc.data(), kern.nr, prefetch);
            epilogue(p, tile, acc.data(), kern.nr, row_sums.data() + r, col_sums, params);
          }
        }
      }
    }
  });
}

}  // namespace qmatmul::gemm

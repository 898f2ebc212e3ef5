// Packing of A row blocks and B column panels into the kernel layouts, with
// the sign shift applied and row/column sums of the shifted values taken in
// the same pass. The layouts are those of src/kernels/int8_kernel.h.
#include "gemm/pack.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <new>

#include "gemm/parallel_region.h"
#include "gemm/zero_point.h"
#include "kernels/dispatch.h"

namespace qmatmul::gemm {

void AlignedBuffer::Free::operator()(void* p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(std::size_t bytes) { resize(bytes); }

void AlignedBuffer::resize(std::size_t bytes) {
  if (bytes <= size_ && ptr_) return;
  // Large buffers (packed weights) go on 2 MiB boundaries and ask for huge
  // pages: first-touch page faults otherwise dominate packing on VMs.
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t align = bytes >= kHuge ? kHuge : 64;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 64) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  ptr_.reset(p);
  size_ = bytes;
}

namespace {

// One full k-group of the KR = 4 byte layout: out[4j + t] = row t, column j,
// sign-shifted; column sums updated. Written as plain loops the compiler
// vectorizes (byte interleave and widening adds).
void pack_group4_portable(const unsigned char* const* rows, int64_t c0, int n, unsigned char flip,
                        unsigned char* __restrict out, uint32_t* __restrict sum) {
  const unsigned char* __restrict r0 = rows[0] + c0;
  const unsigned char* __restrict r1 = rows[1] + c0;
  const unsigned char* __restrict r2 = rows[2] + c0;
  const unsigned char* __restrict r3 = rows[3] + c0;
  for (int j = 0; j < n; ++j) {
    const unsigned char v0 = r0[j] ^ flip, v1 = r1[j] ^ flip, v2 = r2[j] ^ flip, v3 = r3[j] ^ flip;
    out[4 * j] = v0;
    out[4 * j + 1] = v1;
    out[4 * j + 2] = v2;
    out[4 * j + 3] = v3;
    sum[j] += static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(v0)) + static_cast<int8_t>(v1) +
                                    static_cast<int8_t>(v2) + static_cast<int8_t>(v3));
  }
}

// An ISA packer when it was compiled (non-null) and the CPU runs `isa`
// (kernels::cpu_supports, the dispatch table's detection), else `fallback`.
// Each call site keeps the answer in a function-local static: chosen once
// per process.
template <typename Fn>
Fn usable(Fn compiled, kernels::Isa isa, Fn fallback = nullptr) {
  return compiled != nullptr && kernels::cpu_supports(isa) ? compiled : fallback;
}

// Packs panels [panel0, panel1) of one K x N matrix. Each k-group reads KR
// consecutive rows of B (a short contiguous segment of each) and writes one
// contiguous NR x KR block per panel, so both sides stream; padding (k >= K,
// columns >= N) is written as zeros in the same pass.
template <typename Packed>
void pack_b_panels(const kernels::Int8GemmKernel& kern, const unsigned char* b, ElementType type, int64_t K,
                   int64_t N, int64_t panel0, int64_t panel1, std::size_t panel_elems, void* out,
                   int32_t* sums) {
  const int nr = kern.nr, kr = kern.kr;
  const int64_t kgroups = kgroups_for(kern, K);
  const unsigned char flip = b_domain_shift(type) != 0 ? 0x80 : 0;  // uint8 -> s8 domain
  const int64_t whole = std::min(panel1, N / nr);  // panels with no column past N
  // Panels [panel0, whole) by an ISA packer that takes whole panels over all
  // k-groups (pack_panels_vnni16_avx2, pack_panels_{int16,pair_bytes}_avx2); the rest
  // are left to the loop below.
  const auto pack_whole_panels = [&](auto packer) {
    packer(b, N, K, panel0 * nr, whole - panel0, flip, static_cast<Packed*>(out), panel_elems, sums);
    out = static_cast<Packed*>(out) + (whole - panel0) * panel_elems;
    sums += (whole - panel0) * nr;
    panel0 = whole;
  };
  if constexpr (sizeof(Packed) == 1) {
    // Pairs of whole panels in the zmm VNNI layout: the AVX-512 packer.
    static const PackPanelPairsFn panel_pairs =
        usable(pack_panel_pairs_vnni_avx512_fn(), kernels::Isa::Avx512Vnni);
    if (panel_pairs != nullptr && nr == 32 && kr == 4) {
      while (panel0 + 2 <= whole) {
        const int pairs = static_cast<int>(std::min<int64_t>(16, (whole - panel0) / 2));
        panel_pairs(b, N, K, panel0 * nr, pairs, flip, static_cast<unsigned char*>(out),
                    static_cast<int64_t>(panel_elems), sums);
        out = static_cast<unsigned char*>(out) + 2 * pairs * panel_elems;
        sums += 2 * pairs * nr;
        panel0 += 2 * pairs;
      }
      if (panel0 == panel1) return;
    }
    // Whole panels of the AVX-VNNI kernels' ymm layout: the AVX2 packer.
    static const PackPanelsVnni16Fn panels_vnni16 = usable(pack_panels_vnni16_avx2_fn(), kernels::Isa::Avx2);
    if (panels_vnni16 != nullptr && nr == 16 && kr == 4 && whole > panel0) {
      pack_whole_panels(panels_vnni16);
      if (panel0 == panel1) return;
    }
    // Whole panels of the exact AVX2 kernel's pair layout, as bytes.
    static const PackPanelsPairBytesFn panels_pair_bytes =
        usable(pack_panels_pair_bytes_avx2_fn(), kernels::Isa::Avx2);
    if (panels_pair_bytes != nullptr && nr == 16 && kr == 2 && whole > panel0) {
      pack_whole_panels(panels_pair_bytes);
      if (panel0 == panel1) return;
    }
  } else {
    // Whole panels of the pair layout as int16 (the AVX-512 BW kernel's).
    static const PackPanelsInt16Fn panels_int16 = usable(pack_panels_int16_avx2_fn(), kernels::Isa::Avx2);
    if (panels_int16 != nullptr && nr == 16 && kr == 2 && whole > panel0) {
      pack_whole_panels(panels_int16);
      if (panel0 == panel1) return;
    }
  }
  const int64_t width = (panel1 - panel0) * nr;
  // Wrapping sums, accumulated in place (int32 and uint32 may alias).
  uint32_t* col_sum = reinterpret_cast<uint32_t*>(sums);
  std::fill(col_sum, col_sum + width, 0u);
  auto* dst = static_cast<Packed*>(out);
  const unsigned char* rows[16];
  for (int64_t g = 0; g < kgroups; ++g) {
    for (int t = 0; t < kr; ++t) {
      const int64_t k = g * kr + t;
      rows[t] = k < K ? b + k * N : nullptr;
    }
    for (int64_t panel = panel0; panel < panel1; ++panel) {
      Packed* block = dst + static_cast<std::size_t>(panel - panel0) * panel_elems + static_cast<std::size_t>(g * nr * kr);
      uint32_t* sum = col_sum + (panel - panel0) * nr;
      const int64_t c0 = panel * nr;
      const int valid = static_cast<int>(std::clamp<int64_t>(N - c0, 0, nr));
      if constexpr (sizeof(Packed) == 1) {
        if (kr == 4 && rows[3] != nullptr) {  // the VNNI layout, a whole k-group: 4-byte interleave
          static const PackGroup4Fn pack_group4 =
              usable(pack_group4_avx2_fn(), kernels::Isa::Avx2, &pack_group4_portable);
          pack_group4(rows, c0, valid, flip, reinterpret_cast<unsigned char*>(block), sum);
          for (int j = valid * kr; j < nr * kr; ++j) block[j] = 0;
          continue;
        }
      }
      for (int j = 0; j < valid; ++j) {
        for (int t = 0; t < kr; ++t) {
          const int32_t v = rows[t] ? static_cast<int8_t>(static_cast<unsigned char>(rows[t][c0 + j] ^ flip)) : 0;
          block[j * kr + t] = static_cast<Packed>(v);
          sum[j] += static_cast<uint32_t>(v);
        }
      }
      for (int j = valid * kr; j < nr * kr; ++j) block[j] = 0;
    }
  }
}

// A block for a kernel whose A k-group is its own (a_kr, the AMX kernel's
// 64 bytes, int8_kernel.h): k-group g of row i at (g * mr + i) * akr, each a
// copy of the row's bytes sign-shifted by `flip`, zero past K; rows past
// `rows` zero.
void pack_a_block_wide_groups(int mr, int akr, const unsigned char* a, int64_t K, int64_t rows, unsigned char flip,
                              unsigned char* out, int32_t* row_sums) {
  const int64_t groups = (K + akr - 1) / akr;
  for (int i = 0; i < mr; ++i) {
    const unsigned char* row = a + i * K;
    uint32_t sum = 0;  // wrapping, as every zero-point term
    for (int64_t g = 0; g < groups; ++g) {
      unsigned char* __restrict d = out + (g * mr + i) * akr;
      const int64_t k0 = g * akr, n = i < rows ? std::min<int64_t>(akr, K - k0) : 0;
      for (int64_t t = 0; t < n; ++t) {
        const unsigned char v = row[k0 + t] ^ flip;
        d[t] = v;
        sum += v;
      }
      std::memset(d + n, 0, static_cast<std::size_t>(akr - n));
    }
    if (row_sums != nullptr && i < rows) row_sums[i] = static_cast<int32_t>(sum);
  }
}

template <typename Packed>
void pack_a_block(const kernels::Int8GemmKernel& kern, const unsigned char* a, ElementType type,
                  int64_t rows, int64_t K, void* out, int32_t* row_sums) {
  const int mr = kern.mr, kr = kern.kr;
  const int64_t kgroups = kgroups_for(kern, K);
  const int64_t k_full = K / kr * kr;  // k covered by whole groups
  const unsigned char flip = a_domain_shift(type) != 0 ? 0x80 : 0;  // int8 -> u8 domain
  if constexpr (sizeof(Packed) == 1) {
    if (kern.a_kr != 0) {
      static const PackABlockK64Fn k64 = usable(pack_a_block_k64_avx512_fn(), kernels::Isa::Avx512Vnni);
      if (k64 != nullptr && kern.a_kr == 64)
        k64(mr, a, K, rows, flip, static_cast<unsigned char*>(out), row_sums);
      else
        pack_a_block_wide_groups(mr, kern.a_kr, a, K, rows, flip, static_cast<unsigned char*>(out), row_sums);
      return;
    }
    static const PackABlock8Fn block8 = usable(pack_a_block8_vnni_avx512_fn(), kernels::Isa::Avx512Vnni);
    if (block8 != nullptr && mr == 8 && kr == 4) {
      int32_t unused_sums[8];  // it always writes them
      block8(a, K, rows, flip, static_cast<unsigned char*>(out), row_sums != nullptr ? row_sums : unused_sums);
      return;
    }
  } else {
    // Any of the exact kernels' heights, with or without the sums.
    static const bool avx2 = usable(pack_a_block_int16_avx2_fn(6, true), kernels::Isa::Avx2) != nullptr;
    const PackABlockInt16Fn block = avx2 && kr == 2 ? pack_a_block_int16_avx2_fn(mr, row_sums != nullptr) : nullptr;
    if (block != nullptr) {
      block(a, K, rows, flip, static_cast<int16_t*>(out), row_sums);
      return;
    }
  }
  auto* dst = static_cast<Packed*>(out);
  for (int i = 0; i < mr; ++i) {
    if (i >= rows) {  // padding row
      for (int64_t g = 0; g < kgroups; ++g)
        for (int t = 0; t < kr; ++t) dst[(g * mr + i) * kr + t] = 0;
      continue;
    }
    const unsigned char* row = a + i * K;
    if (row_sums != nullptr) {
      uint32_t sum = 0;  // wrapping: exact modulo 2^32 like every zero-point term
      for (int64_t k = 0; k < K; ++k) sum += static_cast<unsigned char>(row[k] ^ flip);
      row_sums[i] = static_cast<int32_t>(sum);
    }
    Packed* d = dst + i * kr;
    if constexpr (sizeof(Packed) == 1) {
      if (kr == 4) {  // the VNNI layout: one 32-bit word per k-group
        const uint32_t flip4 = flip * 0x01010101u;
        for (int64_t k = 0; k < k_full; k += 4, d += mr * 4) {
          uint32_t word;
          std::memcpy(&word, row + k, 4);
          word ^= flip4;
          std::memcpy(d, &word, 4);
        }
      }
    }
    if (sizeof(Packed) != 1 || kr != 4)
      for (int64_t k = 0; k < k_full; k += kr, d += mr * kr)
        for (int t = 0; t < kr; ++t) d[t] = static_cast<Packed>(static_cast<unsigned char>(row[k + t] ^ flip));
    if (k_full < K || k_full < kgroups * kr)
      for (int t = 0; t < kr; ++t) {
        const int64_t k = k_full + t;
        d[t] = static_cast<Packed>(k < K ? static_cast<unsigned char>(row[k] ^ flip) : 0);
      }
  }
}

}  // namespace

PackedB pack_b(const kernels::Int8GemmKernel& kern, const void* b, ElementType type,
               int64_t batches, int64_t K, int64_t N, int threads, AlignedBuffer storage) {
  PackedB p;
  p.data = std::move(storage);
  p.kernel = &kern;
  p.batches = batches;
  p.K = K;
  p.N = N;
  p.kgroups = kgroups_for(kern, K);
  p.panels = (N + kern.nr - 1) / kern.nr;
  p.panel_bytes = packed_panel_bytes(kern, p.kgroups);
  p.data.resize(static_cast<std::size_t>(batches * p.panels) * p.panel_bytes);
  p.col_sums.assign(static_cast<std::size_t>(batches * p.panels * kern.nr), 0);
  const auto* src = static_cast<const unsigned char*>(b);
  const std::size_t panel_elems = static_cast<std::size_t>(p.kgroups * kern.nr * kern.kr);
  // Jobs of up to 32 panels: long contiguous row segments, enough jobs to share.
  constexpr int64_t kPanelsPerJob = 32;
  const int64_t jobs_per_batch = (p.panels + kPanelsPerJob - 1) / kPanelsPerJob;
  const int64_t jobs = batches * jobs_per_batch;
  run_tasks_region(threads, jobs, [&] {
#pragma omp for schedule(static)
    for (int64_t job = 0; job < jobs; ++job) {
      const int64_t batch = job / jobs_per_batch;
      const int64_t panel0 = (job % jobs_per_batch) * kPanelsPerJob;
      const int64_t panel1 = std::min(p.panels, panel0 + kPanelsPerJob);
      const unsigned char* mat = src + batch * K * N;
      void* out = const_cast<void*>(p.panel(batch, panel0));
      int32_t* sums = p.col_sums.data() + (batch * p.panels + panel0) * kern.nr;
      if (kernels::b_element_bytes(kern) == 2)
        pack_b_panels<int16_t>(kern, mat, type, K, N, panel0, panel1, panel_elems, out, sums);
      else
        pack_b_panels<int8_t>(kern, mat, type, K, N, panel0, panel1, panel_elems, out, sums);
    }
  });
  return p;
}

void pack_b_panel_range(const kernels::Int8GemmKernel& kern, const void* b, ElementType type, int64_t K, int64_t N,
                        int64_t panel0, int64_t panel1, void* out, int32_t* sums) {
  const std::size_t panel_elems = static_cast<std::size_t>(kgroups_for(kern, K) * kern.nr * kern.kr);
  const auto* mat = static_cast<const unsigned char*>(b);
  if (kernels::b_element_bytes(kern) == 2)
    pack_b_panels<int16_t>(kern, mat, type, K, N, panel0, panel1, panel_elems, out, sums);
  else
    pack_b_panels<int8_t>(kern, mat, type, K, N, panel0, panel1, panel_elems, out, sums);
}

std::size_t packed_a_bytes(const kernels::Int8GemmKernel& kern, int64_t rows, int64_t K) {
  const int64_t blocks = (rows + kern.mr - 1) / kern.mr, akr = kernels::a_kgroup(kern);
  const int64_t a_groups = (K + akr - 1) / akr;
  return static_cast<std::size_t>(blocks * a_groups * kern.mr * akr * kernels::a_element_bytes(kern));
}

void pack_a_rows(const kernels::Int8GemmKernel& kern, const void* a, ElementType type, int64_t rows,
                 int64_t K, void* out, int32_t* row_sums) {
  const auto* src = static_cast<const unsigned char*>(a);
  const std::size_t block_bytes = packed_a_bytes(kern, kern.mr, K);
  auto* dst = static_cast<unsigned char*>(out);
  for (int64_t r0 = 0; r0 < rows; r0 += kern.mr) {
    const int64_t n = rows - r0 < kern.mr ? rows - r0 : kern.mr;
    int32_t* sums = row_sums != nullptr ? row_sums + r0 : nullptr;
    if (kernels::a_element_bytes(kern) == 2)
      pack_a_block<int16_t>(kern, src + r0 * K, type, n, K, dst, sums);
    else
      pack_a_block<uint8_t>(kern, src + r0 * K, type, n, K, dst, sums);
    dst += block_bytes;
  }
}

}  // namespace qmatmul::gemm

// Packing: turns row-major int8/uint8 operands into the panel layouts of
// src/kernels/int8_kernel.h, applying the sign shift of zero_point.h and
// computing the row sums of A' and column sums of B' that the zero-point
// terms need. B is packed whole (once per call, or once for constant
// weights); A is packed one row block at a time inside each worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/int8_kernel.h"
#include "qmatmul/types.h"

namespace qmatmul::gemm {

// A 64-byte aligned, uninitialised byte buffer.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes);
  void* data() { return ptr_.get(); }
  const void* data() const { return ptr_.get(); }
  std::size_t size() const { return size_; }
  void resize(std::size_t bytes);  // contents are not kept

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> ptr_;
  std::size_t size_ = 0;
};

// One full k-group of the KR = 4 byte layout for n columns starting at c0:
// out[4j + t] = rows[t][c0 + j] XOR flip, and sum[j] += the four values as
// signed bytes (wrapping).
using PackGroup4Fn = void (*)(const unsigned char* const* rows, int64_t c0, int n, unsigned char flip,
                              unsigned char* out, uint32_t* sum);
// The AVX2 version (src/gemm/x86/pack_avx2.cpp); nullptr when not compiled.
PackGroup4Fn pack_group4_avx2_fn();

// `pairs` (1..16) pairs of whole NR = 32, KR = 4 panels (columns [c0, c0 +
// 64 * pairs), inside N) of a row-major K x N matrix over all k-groups:
// panel p goes to out + p * panel_bytes (64-byte aligned), its 32 column sums
// of the shifted values to sums + 32 * p.
using PackPanelPairsFn = void (*)(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int pairs,
                                  unsigned char flip, unsigned char* out, int64_t panel_bytes, int32_t* sums);
// The AVX-512 VNNI version (src/gemm/x86/pack_avx512vnni.cpp); nullptr when not compiled.
PackPanelPairsFn pack_panel_pairs_vnni_avx512_fn();

// One block of up to 8 rows (`rows`, row stride K) of A in the MR = 8,
// KR = 4 byte layout, sign-shifted by `flip`, rows past `rows` and k past K
// zero; the row sums of the shifted values go to row_sums[0, rows).
using PackABlock8Fn = void (*)(const unsigned char* a, int64_t K, int64_t rows, unsigned char flip,
                               unsigned char* out, int32_t* row_sums);
// The AVX-512 VNNI version (src/gemm/x86/pack_avx512vnni.cpp); nullptr when not compiled.
PackABlock8Fn pack_a_block8_vnni_avx512_fn();

// Up to mr rows of A in the layout of a kernel whose A k-group is 64 bytes
// (the AMX kernel's a_kr): row i's bytes [64g, 64g + 64) at out + (g * mr +
// i) * 64, sign-shifted, zero past K and in rows past `rows`; the row sums
// to row_sums unless it is null.
using PackABlockK64Fn = void (*)(int mr, const unsigned char* a, int64_t K, int64_t rows, unsigned char flip,
                                 unsigned char* out, int32_t* row_sums);
// The AVX-512 version (src/gemm/x86/pack_avx512vnni.cpp); nullptr when not compiled.
PackABlockK64Fn pack_a_block_k64_avx512_fn();

// The same for the exact AVX2 kernels' layout: up to MR rows, MR = 1 to 6,
// KR = 2, each value widened to int16; with the row sums or without them
// (then row_sums is unused).
using PackABlockInt16Fn = void (*)(const unsigned char* a, int64_t K, int64_t rows, unsigned char flip,
                                   int16_t* out, int32_t* row_sums);
// The AVX2 version for MR = mr (src/gemm/x86/pack_avx2.cpp); nullptr for
// other mr and when not compiled.
PackABlockInt16Fn pack_a_block_int16_avx2_fn(int mr, bool row_sums);

// `panels` whole panels (columns [c0, c0 + 16 * panels), inside N) of a
// row-major K x N matrix in the pair layout of the exact int16 kernels
// (NR = 16, KR = 2) over all k-groups: panel p at out + p * panel_elems, its
// 16 column sums of the shifted values at sums + 16 p. As int16 (the
// AVX-512 BW kernel's B) or as bytes (the AVX2 kernel's, which widens them
// itself).
using PackPanelsInt16Fn = void (*)(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int64_t panels,
                                   unsigned char flip, int16_t* out, std::size_t panel_elems, int32_t* sums);
using PackPanelsPairBytesFn = void (*)(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int64_t panels,
                                       unsigned char flip, int8_t* out, std::size_t panel_elems, int32_t* sums);
// The AVX2 versions (src/gemm/x86/pack_avx2.cpp); nullptr when not compiled.
PackPanelsInt16Fn pack_panels_int16_avx2_fn();
PackPanelsPairBytesFn pack_panels_pair_bytes_avx2_fn();

// The same for the AVX-VNNI kernels' B layout (NR = 16, KR = 4, bytes):
// panel p at out + p * panel_bytes, its 16 column sums at sums + 16 p.
using PackPanelsVnni16Fn = void (*)(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int64_t panels,
                                    unsigned char flip, int8_t* out, std::size_t panel_bytes, int32_t* sums);
// The AVX2 version (src/gemm/x86/pack_avx2.cpp); nullptr when not compiled.
PackPanelsVnni16Fn pack_panels_vnni16_avx2_fn();

inline int64_t kgroups_for(const kernels::Int8GemmKernel& k, int64_t K) { return (K + k.kr - 1) / k.kr; }
// Bytes of one packed B panel of `kgroups` k-groups for this kernel.
inline std::size_t packed_panel_bytes(const kernels::Int8GemmKernel& k, int64_t kgroups) {
  return static_cast<std::size_t>(kgroups * k.nr * k.kr * kernels::b_element_bytes(k));
}

// Every B matrix of one operand, packed into NR-column panels.
struct PackedB {
  const kernels::Int8GemmKernel* kernel = nullptr;
  int64_t batches = 0, K = 0, N = 0;
  int64_t kgroups = 0, panels = 0;
  std::size_t panel_bytes = 0;   // kgroups * NR * KR elements
  AlignedBuffer data;            // [batch][panel] panels
  std::vector<int32_t> col_sums; // [batch][panels * NR], sums of b' over k (0 in padding)

  const void* panel(int64_t batch, int64_t p) const {
    return static_cast<const unsigned char*>(data.data()) +
           (static_cast<std::size_t>(batch * panels + p)) * panel_bytes;
  }
  const int32_t* sums(int64_t batch) const {
    return col_sums.data() + batch * panels * kernel->nr;
  }
};

// Packs `batches` row-major K x N matrices of int8 or uint8 `b` for `kernel`,
// using up to `threads` threads. `storage` is reused when large enough (per-call
// packing hands back the previous call's buffer: no fresh pages to fault in).
PackedB pack_b(const kernels::Int8GemmKernel& kernel, const void* b, ElementType type,
               int64_t batches, int64_t K, int64_t N, int threads, AlignedBuffer storage = {});

// Packs panels [panel0, panel1) of one row-major K x N matrix into `out`,
// panel after panel (the layout of PackedB::panel), and their B' column
// sums, nr per panel, into `sums`. The driver's in-task packing.
void pack_b_panel_range(const kernels::Int8GemmKernel& kernel, const void* b, ElementType type, int64_t K, int64_t N,
                        int64_t panel0, int64_t panel1, void* out, int32_t* sums);

// Bytes pack_a_rows needs for `rows` rows.
std::size_t packed_a_bytes(const kernels::Int8GemmKernel& kernel, int64_t rows, int64_t K);

// Packs `rows` rows of a row-major int8/uint8 matrix (row stride K) into
// ceil(rows / MR) consecutive MR-row blocks, zero-padded, and writes the row
// sums of a' (one per real row) to `row_sums`, unless it is null (no term
// needs them when every zb' is 0).
void pack_a_rows(const kernels::Int8GemmKernel& kernel, const void* a, ElementType type,
                 int64_t rows, int64_t K, void* out, int32_t* row_sums);

}  // namespace qmatmul::gemm

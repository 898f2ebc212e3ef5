// The contract between the GEMM driver and an int8 microkernel.
//
// A microkernel computes one MR x NR tile of raw accumulators over the whole
// reduction it is given, from operands the driver has already packed:
//
//   C[i][j] = sum_{g < kgroups} sum_{t < KR} A'[g][i][t] * B'[g][j][t]
//
// where A' holds "u8-domain" values (0..255) and B' "s8-domain" values
// (-128..127); the driver maps every signedness combination onto this one
// form and undoes the shift with row and column sums (see
// src/gemm/zero_point.h). Packed layouts, for a kernel with tile MR x NR and
// k-group KR:
//
//   packed A block (MR rows): element (g, i, t) at ((g * MR) + i) * KR + t
//   packed B panel (NR cols): element (g, j, t) at ((g * NR) + j) * KR + t
//
// (A kernel may give A a k-group of its own, a_kr below: the AMX kernel's
// A groups 64 k values, a tile row, while its B keeps KR = 4.)
//
// stored as uint8_t / int8_t, or as int16_t as the kernel's `widening` says
// (kernels that multiply in 16 bits read A' pre-widened, and B' pre-widened
// or as bytes that they widen as they load them). Rows, columns
// and k beyond the real matrix are packed as zeros. Every product is exact and
// the sums wrap modulo 2^32; no 16-bit intermediate may saturate.
//
// A microkernel allocates nothing, starts no threads and knows nothing of
// shapes or zero points: it writes MR x NR int32 values to `c` with row
// stride `ldc` (elements), overwriting what was there. (Only the
// requantizing form below knows an output type: it writes bytes.)
//
// `col_init` is nullptr, or NR int32 values added (wrapping) to every row's
// sums before the store: C[i][j] += col_init[j]. The driver passes the
// zero-point term -za' * colsum(B')[j] when that is the whole correction
// (see src/gemm/zero_point.h), so a MatMulInteger tile is final and goes
// straight into the output, with no epilogue pass.
//
// `prefetch` is a hint and never changes a result: nullptr, or the start of
// prefetch_bytes_per_kgroup(kernel) * kgroups bytes that the kernel touches
// with prefetcht0, one 64-byte line at a time spread over its k loop: a line
// per k-group where a k-group of a B panel takes 64 bytes or more, a line per
// two k-groups where it takes 32 (the AVX2 kernel's byte pairs), so that a
// tile's region never runs past the panel after its own. The
// driver points it at the next B panel, so that the first tile of that panel
// finds it in cache instead of waiting for memory: with packed weights
// larger than the caches, that first tile otherwise runs at memory speed.
// Where a panel has a single row tile (few rows) and the region is as long
// as the panel, it points it at B itself, a page ahead of the tile's reads
// (gemm/driver.cpp: stream_ahead_prefetch).
// The region need not be mapped (prefetches never fault); kernels that
// stream B anyway (few rows) may ignore it.
//
// A kernel may also have a two-panel form, `tile_pair`: the MR x 2NR tile of
// two adjacent B panels, the second `panel_stride` bytes after the first,
// written to C's columns [0, 2NR) (col_init then holds 2NR values). The
// result is exactly that of two `tile` calls; it exists for few rows, where
// streaming two panels at once keeps more of B in flight.
//
// And a form that reads A in place, `tile_a_in_place`: A row-major with row
// stride `lda` bytes, row i's k-group g at a + i * lda + g * KR, for MR full
// rows (the k loop reads exactly kgroups * KR bytes of each, so past the
// row's end when K is not a multiple of KR: bytes that meet B's zero
// padding past K), each byte taken as a' = byte xor `a_flip`: 0 for uint8 A
// (a' = a), 0x80 for int8 A (a' = a + 128, the domain shift), the only two
// values. So the driver can skip the packing pass when nothing else needs
// it: no row sums (every zb' = 0), and a whole MR-row tile whose overread,
// at such K, stays within its matrix. The result equals `tile` on packed A.
//
// And a half-width form, `tile_half` (packed A) and `tile_half_a_in_place`
// (A in place, as above): the tile's first NR/2 columns only, read from the
// same NR-wide panel, written as MR x NR/2 values (col_init then holds NR/2
// values). The driver runs it for a last panel of at most NR/2 columns,
// whose other columns are zero padding; the result equals the first NR/2
// columns of `tile` / `tile_a_in_place`.
//
// And a requantizing form, `tile_requant`, for QLinearMatMul: the MR x NR
// sums plus col_init, which the driver passes only when that makes them
// final C (the whole zero-point correction, every zb' = 0), requantized in
// registers as SEMANTICS.md §4 and the epilogue do (RequantParams: every
// multiplier finite, the default rounding) and stored as MR x NR bytes at y
// with row stride ldy. It spares the int32 tile's trip through a buffer and
// the epilogue call. A' is packed A (lda = 0; a_flip unused) or, for a
// kernel that has tile_a_in_place, A read in place with row stride lda
// bytes and a_flip, as that form reads it. The bytes equal the epilogue's on
// the `tile` result.
#pragma once

#include <cstdint>

namespace qmatmul::kernels {

enum class Isa { Portable = 0, Avx2 = 1, AvxVnni = 2, Avx512Vnni = 3, Avx512Bw = 4, Amx = 5 };

const char* isa_name(Isa isa);  // "portable", "avx2", "avxvnni", "avx512vnni", "avx512bw", "amx"

// The AVX2 family: AVX2, AVX-VNNI and AVX-512 BW, whose CPUs all have AVX2
// and whose kernels share the 6 x 16 tile set (tail tiles of 1 to 5 rows,
// tile_set_mx16.h) and the AVX2 tile epilogue (epilogue_avx2.cpp).
constexpr bool is_avx2_family(Isa isa) { return isa == Isa::Avx2 || isa == Isa::AvxVnni || isa == Isa::Avx512Bw; }

// The AVX-512 VNNI family: AVX-512 VNNI and AMX, whose CPUs all have
// AVX-512 VNNI and whose kernels share the 32-column B packing, the
// AVX-512 tile epilogue and the AVX-512 float8 path.
constexpr bool is_avx512vnni_family(Isa isa) { return isa == Isa::Avx512Vnni || isa == Isa::Amx; }

using Int8TileFn = void (*)(int64_t kgroups, const void* packed_a,
                            const void* packed_b, const int32_t* col_init,
                            int32_t* c, int64_t ldc, const void* prefetch);

using Int8TilePairFn = void (*)(int64_t kgroups, const void* packed_a, const void* packed_b,
                                int64_t panel_stride, const int32_t* col_init, int32_t* c, int64_t ldc);

using Int8TileAInPlaceFn = void (*)(int64_t kgroups, const void* a, int64_t lda, uint8_t a_flip,
                                    const void* packed_b, const int32_t* col_init, int32_t* c, int64_t ldc,
                                    const void* prefetch);

// Bytes of the prefetch region per k-group, at most (one cache line).
inline constexpr int64_t kPrefetchBytesPerKgroup = 64;

// The requantization of a tile_requant call, per column of the tile.
struct RequantParams {
  const double* multiplier;    // NR values: f32(f32(a_scale * b_scale) / y_scale), finite, as float64
  const double* y_zero_point;  // NR values, as float64
  bool uint8_output;           // else int8
  bool bounded;                // every |multiplier| <= 0.5
  bool exact_product;          // C * multiplier is exact in float64 (gemm::requant_product_exact)
};

using Int8TileRequantFn = void (*)(int64_t kgroups, const void* a, int64_t lda, uint8_t a_flip,
                                   const void* packed_b, const int32_t* col_init, const RequantParams& rq, void* y,
                                   int64_t ldy, const void* prefetch);

// What one element of a kernel's packed operands takes.
enum class Widening {
  Bytes,   // A' and B' as uint8_t / int8_t
  Int16,   // both as int16_t, widened by the packers
  Int16A,  // A' as int16_t; B' as int8_t, widened by the kernel as it loads it
};

struct Int8GemmKernel {
  const char* name;  // e.g. "u8s8_8x32c4__avx512vnni": types, tile, k-group, ISA
  Isa isa;
  int mr;         // tile rows
  int nr;         // tile columns
  int kr;         // k-group: consecutive k values per row/column in the packing
  Widening widening;  // element width of packed A' and B'
  Int8TileFn tile;
  Int8TilePairFn tile_pair = nullptr;  // the two-panel form, when the kernel has one
  Int8TileAInPlaceFn tile_a_in_place = nullptr;  // the form reading A in place, when it has one
  Int8TileRequantFn tile_requant = nullptr;       // the requantizing form, when it has one
  Int8TileFn tile_half = nullptr;                // the half-width forms, when it has them
  Int8TileAInPlaceFn tile_half_a_in_place = nullptr;
  // A's k-group when it differs from B's, else 0: the AMX kernel reads
  // packed A blocks as element (g, i, t) at ((g * MR) + i) * a_kr + t with
  // a_kr = 64 (a tile row of 64 bytes), zero padded past K, while its B
  // keeps KR = 4. The kernel is still called with B's k-group count.
  int a_kr = 0;
  // Nothing, or a setup its tile calls rely on, to be run on a thread
  // before them (and again after other code may have changed it on that
  // thread): the AMX kernel loads its tile configuration here, which no
  // tile call then checks (sttilecfg and a compare on every call cost it
  // 1-14%). The driver runs it on every thread at the start of each call's
  // parallel region: no other AMX user runs inside one.
  void (*begin)() = nullptr;
  // Whether the forms reading A in place (tile_a_in_place, tile_requant
  // with lda != 0) take int8 A (a_flip 0x80) too. The AMX kernel's do not:
  // its tiles load A's bytes as they are, so the driver gives it uint8 A
  // only (and packs int8 A).
  bool a_in_place_int8 = true;
  // The largest K at which the driver reads A in place, 0 for any: the AMX
  // tile loads 16 rows lda bytes apart, which from K = 256 ran slower than
  // the packed blocks' 1 KB (see int8_tile_amx.cpp).
  int64_t a_in_place_max_k = 0;
};

// Runs k.begin, if it has one.
inline void begin_tile_calls(const Int8GemmKernel& k) {
  if (k.begin != nullptr) k.begin();
}

// A's k-group of kernel k (its packed A layout, above).
constexpr int a_kgroup(const Int8GemmKernel& k) { return k.a_kr != 0 ? k.a_kr : k.kr; }

// Bytes of one packed element of A' and of B' for kernel k.
constexpr int a_element_bytes(const Int8GemmKernel& k) { return k.widening == Widening::Bytes ? 1 : 2; }
constexpr int b_element_bytes(const Int8GemmKernel& k) { return k.widening == Widening::Int16 ? 2 : 1; }

// Bytes of the prefetch region per k-group for kernel k: a line, or a
// k-group of its B panel when that is less (32 bytes: a line per two).
constexpr int64_t prefetch_bytes_per_kgroup(const Int8GemmKernel& k) {
  const int64_t b_group = static_cast<int64_t>(k.nr) * k.kr * b_element_bytes(k);
  return b_group < kPrefetchBytesPerKgroup ? b_group : kPrefetchBytesPerKgroup;
}

// Whether kernel x reads a B packed for kernel y: same panel width, k-group
// and element width.
constexpr bool same_b_layout(const Int8GemmKernel& x, const Int8GemmKernel& y) {
  return x.nr == y.nr && x.kr == y.kr && b_element_bytes(x) == b_element_bytes(y);
}

// One getter per ISA translation unit. Each returns nullptr when that file
// was compiled without its instruction set ("was it compiled"); whether the
// CPU can run it is a separate question (src/cpu/cpu_features.h).
const Int8GemmKernel* int8_kernel_portable();
const Int8GemmKernel* int8_kernel_avx2();
const Int8GemmKernel* int8_kernel_avxvnni();
const Int8GemmKernel* int8_kernel_avx512vnni();
const Int8GemmKernel* int8_kernel_avx512bw();
const Int8GemmKernel* int8_kernel_amx();
// A tile kernel for few rows (M <= its mr), e.g. LLM decoding; may be null.
const Int8GemmKernel* int8_kernel_avx512vnni_small_m();

}  // namespace qmatmul::kernels

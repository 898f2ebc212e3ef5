// The qmatmul public API: ONNX MatMulInteger (opset 10) and QLinearMatMul
// (opsets 10 and 21) on caller-owned tensor views. Semantics are those of
// SEMANTICS.md: numpy.matmul broadcasting, per-tensor/row/column/batch
// quantization parameters, exact int32 accumulation, float64 requantization
// rounded half to even. Every function is safe to call from several threads
// at once; each call may itself use `Options::threads` worker threads.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "qmatmul/types.h"

namespace qmatmul {

// How QLinearMatMul turns the int32 accumulator into the output type.
enum class Requantization {
  // v = double(C) * double(m) + double(y_zero_point), rounded half to even,
  // saturated. Bit-identical to the ONNX reference for float32 scales.
  OnnxReference,
  // ONNX Runtime's CPU arithmetic: sat(rne(f32(f32(C) * m)) + y_zero_point).
  OnnxRuntimeCompat,
};

struct Options {
  int threads = 0;  // worker threads for one call, at most; 0 = all cores
  // A call takes one of those threads per min_macs_per_thread units of work,
  // and at least one: a unit is a multiply-add (3 for float8 operands), and
  // each byte of B read counts 4 more. So small calls run on one thread,
  // where starting and joining a team would cost more than it saves.
  // Measured on a 2-core VM (MatMulInteger, 3 interleaved rounds of 31
  // calls, two threads against one, the caller busy for 1 ms between calls
  // / calls back to back): about 4.2M units, 64x256x256 1.47 / 1.58,
  // 128x256x128 1.51 / 1.34, 16 batches of 64x64x64 1.65 / 1.78; 2.6M,
  // 16x256x512 0.91 / 1.36; 1.1M, 64x128x128 0.79 / 1.22. So two threads
  // from 4M units. A call with at least 4 output batches per thread counts
  // half this per thread, since it splits by whole batches (two threads
  // from 2M units: 64 batches of 8x64x64 1.39 / 1.44). 0 = always
  // `threads`. Results do not depend on the thread count, so this changes
  // only speed.
  int64_t min_macs_per_thread = 2'000'000;
  // The crossover follows the cost of a parallel region, which differs
  // between VMs: where an empty 2-thread region took 3 us, two threads
  // paid only from about twice the default. So by default the library
  // times that region once per process (about 0.1 ms, at the first call
  // large enough to take a second thread) and raises min_macs_per_thread
  // to 1.25M units per microsecond of it when that is more (4M at 3.2 us;
  // src/gemm/thread_cost.h has the figures). false: min_macs_per_thread
  // exactly, and no measurement.
  bool measure_thread_cost = true;
  Requantization requantization = Requantization::OnnxReference;
  int qlinear_opset = 21;  // 10 restricts QLinearMatMul to int8/uint8 and float32 scales
};

// numpy.matmul's output shape for inputs of these shapes (1-D operands
// promoted and their axis dropped, batch dims broadcast). `op` names the
// operator in error messages.
Shape matmul_output_shape(const Shape& a, const Shape& b,
                          const std::string& op = "MatMul");

// MatMulInteger-10: y = sum_k (a - a_zero_point)(b - b_zero_point) in
// wrapping int32. Zero points are optional (absent = 0). `y` must be int32
// with the shape matmul_output_shape(a.dims, b.dims).
void matmul_integer(const TensorView& a, const TensorView& b,
                    const std::optional<TensorView>& a_zero_point,
                    const std::optional<TensorView>& b_zero_point,
                    const MutableTensorView& y, const Options& options = {});
Tensor matmul_integer(const TensorView& a, const TensorView& b,
                      const std::optional<TensorView>& a_zero_point = std::nullopt,
                      const std::optional<TensorView>& b_zero_point = std::nullopt,
                      const Options& options = {});

// QLinearMatMul-10/21. The output type is y_zero_point's type; `y` must have
// that type and the matmul output shape.
void qlinear_matmul(const TensorView& a, const TensorView& a_scale,
                    const TensorView& a_zero_point, const TensorView& b,
                    const TensorView& b_scale, const TensorView& b_zero_point,
                    const TensorView& y_scale, const TensorView& y_zero_point,
                    const MutableTensorView& y, const Options& options = {});
Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale,
                      const TensorView& a_zero_point, const TensorView& b,
                      const TensorView& b_scale, const TensorView& b_zero_point,
                      const TensorView& y_scale, const TensorView& y_zero_point,
                      const Options& options = {});

// A constant B operand (weights) packed once for the kernel this CPU runs,
// then reused by any number of calls, from any number of threads. Holds a
// copy of B's values in kernel layout with their column sums; zero points and
// scales are passed per call, so one packed B serves every quantization, or
// stored with it (pack(b, b_zero_point, b_scale)) for constant weights that
// come with theirs. Cheap to copy (shared, immutable).
// An int8/uint8 PackedB serves MatMulInteger and integer QLinearMatMul; a
// float8 PackedB serves QLinearMatMul-21 (its values pre-converted for the
// bfloat16 tiles where this CPU has them, used when b_zero_point is 0).
class PackedB {
 public:
  PackedB() = default;
  // `b` must be int8, uint8 or float8 with rank >= 1 (a 1-D b is the vector [K]).
  static PackedB pack(const TensorView& b, const Options& options = {});
  // B together with its quantization parameters (copied), for the overloads
  // below that take them from the PackedB: b_zero_point (MatMulInteger and
  // QLinearMatMul) and b_scale (QLinearMatMul). Their element types are
  // checked here; their shapes against each call, exactly as when passed.
  static PackedB pack(const TensorView& b, const std::optional<TensorView>& b_zero_point,
                      const std::optional<TensorView>& b_scale, const Options& options = {});
  std::optional<TensorView> b_zero_point() const;  // as packed, or nullopt
  std::optional<TensorView> b_scale() const;

  ElementType type() const;
  const Shape& dims() const;
  bool empty() const { return impl_ == nullptr; }

  struct Impl;  // defined in src/api/packed_b.h
  const Impl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<const Impl> impl_;
};

// The operators with a packed B: same semantics and validation as above.
void matmul_integer(const TensorView& a, const PackedB& b,
                    const std::optional<TensorView>& a_zero_point,
                    const std::optional<TensorView>& b_zero_point,
                    const MutableTensorView& y, const Options& options = {});
void qlinear_matmul(const TensorView& a, const TensorView& a_scale,
                    const TensorView& a_zero_point, const PackedB& b,
                    const TensorView& b_scale, const TensorView& b_zero_point,
                    const TensorView& y_scale, const TensorView& y_zero_point,
                    const MutableTensorView& y, const Options& options = {});
Tensor matmul_integer(const TensorView& a, const PackedB& b,
                      const std::optional<TensorView>& a_zero_point,
                      const std::optional<TensorView>& b_zero_point, const Options& options = {});
Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale,
                      const TensorView& a_zero_point, const PackedB& b,
                      const TensorView& b_scale, const TensorView& b_zero_point,
                      const TensorView& y_scale, const TensorView& y_zero_point,
                      const Options& options = {});

// The operators with B's zero point and scale stored in the PackedB (see
// PackedB::pack(b, b_zero_point, b_scale)); MatMulInteger without a stored
// zero point uses 0, QLinearMatMul requires both.
void matmul_integer(const TensorView& a, const std::optional<TensorView>& a_zero_point, const PackedB& b,
                    const MutableTensorView& y, const Options& options = {});
Tensor matmul_integer(const TensorView& a, const std::optional<TensorView>& a_zero_point, const PackedB& b,
                      const Options& options = {});
void qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                    const PackedB& b, const TensorView& y_scale, const TensorView& y_zero_point,
                    const MutableTensorView& y, const Options& options = {});
Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                      const PackedB& b, const TensorView& y_scale, const TensorView& y_zero_point,
                      const Options& options = {});

// Library version, "MAJOR.MINOR.PATCH".
const char* version();

}  // namespace qmatmul

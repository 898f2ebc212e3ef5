// One int8 GEMM call as the driver sees it, after validation: batched
// [M,K] x [K,N] products with B already packed, every quantization parameter
// converted once (zero points to int32 in the kernel's domain, scales to
// float32) and addressed through broadcast strides, and the output kind.
#pragma once

#include <cstdint>

#include "gemm/pack.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul::gemm {

// A broadcast view of a converted parameter: the value for output batch b,
// row i, column j is data[batch_offset[b] + i * row_stride + j * col_stride].
template <typename T>
struct ParamSpan {
  const T* data = nullptr;
  const int64_t* batch_offset = nullptr;  // one per output batch
  int64_t row_stride = 0;
  int64_t col_stride = 0;

  const T* at(int64_t batch, int64_t i, int64_t j) const {
    return data + batch_offset[batch] + i * row_stride + j * col_stride;
  }
};

enum class OutputKind { Int32, Uint8, Int8 };

struct GemmProblem {
  int64_t M = 0, K = 0, N = 0;
  int64_t batches = 0;               // output batches
  const int64_t* a_index = nullptr;  // per output batch: which A matrix
  const int64_t* b_index = nullptr;  // per output batch: which packed B matrix
  const void* a = nullptr;           // A matrices, row-major, M*K elements apart
  ElementType a_type = ElementType::Uint8;
  const PackedB* b = nullptr;
  // Or, with b null: B as given (row-major [K][N] matrices, K*N elements
  // apart, int8 or uint8), packed by the driver panel group by panel group
  // inside each task (see pack_b_in_tasks).
  const void* b_raw = nullptr;
  ElementType b_type = ElementType::Int8;
  // The tile kernel: b->kernel, or a small-M kernel reading the same layout.
  const kernels::Int8GemmKernel* kernel = nullptr;

  // Zero points already moved into the kernel domain (zero_point.h): za', zb'.
  ParamSpan<int32_t> a_zero_point, b_zero_point;

  OutputKind output = OutputKind::Int32;
  // QLinearMatMul only.
  ParamSpan<float> a_scale, b_scale, y_scale;
  ParamSpan<int32_t> y_zero_point;
  Requantization requantization = Requantization::OnnxReference;

  void* y = nullptr;  // [batches][M][N] of the output kind
  int threads = 1;
};

}  // namespace qmatmul::gemm

// The implementation behind qmatmul::PackedB: B's values packed once, in the
// layout of the kernel family dispatch chose for this process, with their
// column sums (int8/uint8 B), or prepared for the float8 GEMM (float8 B).
// The operators use it in place of packing B per call.
#pragma once

#include <optional>

#include "gemm/float8_gemm.h"
#include "gemm/pack.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul {

struct PackedB::Impl {
  ElementType type = ElementType::Undefined;
  Shape dims;
  gemm::PackedB packed;           // int8/uint8 B: the int8 kernels' layout
  gemm::Float8PackedB float8;     // float8 B: see src/gemm/float8_gemm.h
  std::optional<Tensor> b_zero_point, b_scale;  // stored quantization (packed_quantization.cpp)
};

}  // namespace qmatmul

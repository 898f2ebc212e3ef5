// The implementation behind qmatmul::PackedB: B's values packed once, in the
// layout of the kernel family dispatch chose for this process, with their
// column sums. The operators use it in place of packing B per call.
#pragma once

#include "gemm/pack.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul {

struct PackedB::Impl {
  ElementType type = ElementType::Undefined;
  Shape dims;
  gemm::PackedB packed;
};

}  // namespace qmatmul

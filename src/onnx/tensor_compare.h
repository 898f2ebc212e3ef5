// Exact tensor comparison for the ONNX node-test runner (qmatmul onnx-test)
// and the tests: same element type, same shape, and byte-equal elements,
// except that any NaN equals any NaN in the float types (float32, float64,
// float16, bfloat16 and the float8 types, whose NaN codes differ per type).
// A mismatch is described in words: the first differing element by flat index
// and coordinates, its value and the expected value (with the bit pattern
// for the 16- and 8-bit float types), and how many elements differ.
#pragma once

#include <string>

#include "qmatmul/types.h"

namespace qmatmul::onnx_io {

// True when the element at `bits` (element_size(type) bytes) is a NaN of
// `type`; always false for integer types.
bool is_nan_element(ElementType type, const void* bits);

// The element as a number, e.g. "-3", "0.5", "448 (0x7e)", "nan (0x7f)".
std::string format_element(const TensorView& tensor, int64_t index);

// Empty when `got` matches `expected` exactly, else the reason it does not.
std::string compare_tensors(const TensorView& got, const TensorView& expected);

}  // namespace qmatmul::onnx_io

// Shape validation for both operators: numpy.matmul broadcasting of A and B
// and the quantization-parameter layouts of SEMANTICS.md §2. Everything is
// reduced to one internal form, the output seen as [batch..., M, N] (1-D
// operands promoted), and every parameter as a broadcast view with one stride
// per internal dimension (0 where it is broadcast). The GEMM driver only ever
// sees that form.
#pragma once

#include <string>
#include <vector>

#include "qmatmul/types.h"

namespace qmatmul::api {

// Names used in error messages: the operator and its ONNX input names.
struct OpNames {
  std::string op;  // "MatMulInteger" or "QLinearMatMul"
  std::string a, b, y;  // "A","B","Y" or "a","b","y"
};

struct MatmulShape {
  Shape out;                  // the output shape as returned (1-D axes dropped)
  Shape batch;                // broadcast batch dims of the output
  int64_t batch_count = 1;    // product of `batch`
  int64_t M = 1, K = 0, N = 1;
  bool a_is_vector = false;   // A was 1-D ([K] read as [1,K])
  bool b_is_vector = false;   // B was 1-D ([K] read as [K,1])
  Shape a_batch, b_batch;     // each operand's own batch dims
  int64_t a_batch_count = 1, b_batch_count = 1;
  // For each output batch (row-major over `batch`), which A matrix and which
  // B matrix it multiplies.
  std::vector<int64_t> a_index, b_index;
};

MatmulShape analyze_matmul(const Shape& a, const Shape& b, const OpNames& names);

// The work of one call in the units of Options::min_macs_per_thread:
// `mac_cost` per multiply-add (1 for int8, 3 for float8) plus 4 per byte of B.
double call_work(const MatmulShape& s, double mac_cost);

// A parameter tensor seen over the internal output [batch..., M, N]: the
// element for (batch b, row i, column j) is at
// batch_offset[b] + i * row_stride + j * col_stride.
struct ParamLayout {
  std::vector<int64_t> batch_offset;  // one per output batch
  int64_t row_stride = 0;
  int64_t col_stride = 0;
  int64_t count = 1;                  // elements in the parameter tensor
  bool per_tensor() const;            // one value for everything
};

// a_zero_point / a_scale: [], [1], [M] (A rank >= 2), or rank >= 2 ending in
// [M,1] / [1,1] with leading dims broadcastable to A's batch dims.
ParamLayout a_param_layout(const Shape& param, const std::string& param_name,
                           const MatmulShape& s, const OpNames& names);
// b_zero_point / b_scale: [], [1], [N] (B rank >= 2), or rank >= 2 ending in
// [1,N] / [1,1] with leading dims broadcastable to B's batch dims.
ParamLayout b_param_layout(const Shape& param, const std::string& param_name,
                           const MatmulShape& s, const OpNames& names);
// y_zero_point / y_scale: any shape numpy-broadcastable to the output shape.
ParamLayout y_param_layout(const Shape& param, const std::string& param_name,
                           const MatmulShape& s, const OpNames& names);

}  // namespace qmatmul::api

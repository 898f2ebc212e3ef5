// Constant weights packed together with their quantization parameters:
// PackedB::pack(b, b_zero_point, b_scale) keeps copies of b_zero_point and
// b_scale beside the packed values, and the operator overloads that omit
// them pass the stored ones on to the ordinary PackedB overloads, so the
// validation (layouts against each call's shape, scale values) and the
// arithmetic are exactly those of a call that passes them.
#include "api/packed_b.h"
#include "api/params.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul {
namespace {

[[noreturn]] void fail(const std::string& op, const std::string& msg) { throw Error(op + ": " + msg); }

Tensor copy_of(const std::string& op, const std::string& name, const TensorView& v) {
  if (element_count(v.dims) > 0 && v.data == nullptr) fail(op, name + " has no data (null pointer)");
  return Tensor::copy_of(v);
}

std::optional<TensorView> view_of(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return t->view();
}

// The stored parameter a QLinearMatMul call needs, or a clear error. An
// empty PackedB passes an empty view on: the call reports the empty PackedB.
TensorView required(const PackedB& b, std::optional<TensorView> stored, const std::string& name) {
  if (b.empty()) return {};
  if (!stored)
    fail("QLinearMatMul", "b is a PackedB packed without " + name +
                              "; pack it with PackedB::pack(b, b_zero_point, b_scale) or pass " + name +
                              " to the call");
  return *stored;
}

}  // namespace

PackedB PackedB::pack(const TensorView& b, const std::optional<TensorView>& b_zero_point,
                      const std::optional<TensorView>& b_scale, const Options& options) {
  const std::string op = "PackedB::pack";
  if (b_zero_point && b_zero_point->type != b.type)
    fail(op, "b_zero_point has type " + type_name(b_zero_point->type) + " but b has type " + type_name(b.type) +
                 "; a zero point must have its tensor's type");
  if (b_scale && !api::is_scale_type(b_scale->type, /*opset21=*/true))
    fail(op, "b_scale has type " + type_name(b_scale->type) + "; scales must be float32, float16 or bfloat16");
  PackedB out = pack(b, options);
  auto impl = std::const_pointer_cast<Impl>(out.impl_);  // just made: this is its only owner
  if (b_zero_point) impl->b_zero_point = copy_of(op, "b_zero_point", *b_zero_point);
  if (b_scale) impl->b_scale = copy_of(op, "b_scale", *b_scale);
  return out;
}

std::optional<TensorView> PackedB::b_zero_point() const { return impl_ ? view_of(impl_->b_zero_point) : std::nullopt; }
std::optional<TensorView> PackedB::b_scale() const { return impl_ ? view_of(impl_->b_scale) : std::nullopt; }

void matmul_integer(const TensorView& a, const std::optional<TensorView>& a_zero_point, const PackedB& b,
                    const MutableTensorView& y, const Options& options) {
  matmul_integer(a, b, a_zero_point, b.b_zero_point(), y, options);
}

Tensor matmul_integer(const TensorView& a, const std::optional<TensorView>& a_zero_point, const PackedB& b,
                      const Options& options) {
  return matmul_integer(a, b, a_zero_point, b.b_zero_point(), options);
}

void qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                    const PackedB& b, const TensorView& y_scale, const TensorView& y_zero_point,
                    const MutableTensorView& y, const Options& options) {
  const TensorView b_scale = required(b, b.b_scale(), "b_scale");  // checked in this order
  const TensorView b_zero_point = required(b, b.b_zero_point(), "b_zero_point");
  qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, y, options);
}

Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                      const PackedB& b, const TensorView& y_scale, const TensorView& y_zero_point,
                      const Options& options) {
  const TensorView b_scale = required(b, b.b_scale(), "b_scale");  // checked in this order
  const TensorView b_zero_point = required(b, b.b_zero_point(), "b_zero_point");
  return qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, options);
}

}  // namespace qmatmul

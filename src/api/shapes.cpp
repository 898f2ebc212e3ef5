// numpy.matmul broadcasting and the quantization-parameter layouts
// (SEMANTICS.md §1-2), with the error messages of §6. See shapes.h.
#include "api/shapes.h"

#include <algorithm>

namespace qmatmul::api {
namespace {

std::string str(const Shape& s) { return shape_to_string(s); }

[[noreturn]] void fail(const OpNames& n, const std::string& msg) { throw Error(n.op + ": " + msg); }

// Row-major strides of a contiguous tensor of shape `dims`.
std::vector<int64_t> contiguous_strides(const Shape& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// For every index of the row-major iteration over `dims`, sum(index[d] * strides[d]).
std::vector<int64_t> offsets_over(const Shape& dims, const std::vector<int64_t>& strides,
                                  int64_t count) {
  std::vector<int64_t> out(static_cast<std::size_t>(count), 0);
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = 0;
  for (int64_t n = 0; n < count; ++n) {
    out[static_cast<std::size_t>(n)] = offset;
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (dims[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

// Strides, one per output batch dim, of a tensor whose leading dims `lead`
// (right-aligned) broadcast onto `batch`; `elem_strides` are the natural
// strides of `lead`. A dim of 1 broadcasts (stride 0).
std::vector<int64_t> batch_strides(const Shape& batch, const Shape& lead,
                                   const std::vector<int64_t>& elem_strides) {
  std::vector<int64_t> strides(batch.size(), 0);
  const std::size_t shift = batch.size() - lead.size();
  for (std::size_t d = 0; d < lead.size(); ++d)
    if (lead[d] != 1) strides[shift + d] = elem_strides[d];
  return strides;
}

}  // namespace

bool ParamLayout::per_tensor() const {
  return row_stride == 0 && col_stride == 0 &&
         std::all_of(batch_offset.begin(), batch_offset.end(), [](int64_t o) { return o == 0; });
}

double call_work(const MatmulShape& s, double mac_cost) {
  const double macs = double(s.batch_count) * double(s.M) * double(s.K) * double(s.N);
  const double b_bytes = double(s.b_batch_count) * double(s.K) * double(s.N);
  return mac_cost * macs + 4 * b_bytes;
}

MatmulShape analyze_matmul(const Shape& a, const Shape& b, const OpNames& n) {
  for (const auto* t : {&a, &b}) {
    const std::string& name = t == &a ? n.a : n.b;
    if (t->empty()) fail(n, name + " is a scalar (shape []); matmul needs rank 1 or more");
    for (int64_t d : *t)
      if (d < 0) fail(n, name + " has shape " + str(*t) + " with a negative dimension");
    element_count(*t);  // throws on overflow
  }
  MatmulShape s;
  s.a_is_vector = a.size() == 1;
  s.b_is_vector = b.size() == 1;
  const int64_t ka = a.back();
  const int64_t kb = s.b_is_vector ? b[0] : b[b.size() - 2];
  if (ka != kb)
    fail(n, n.a + " has shape " + str(a) + " and " + n.b + " has shape " + str(b) +
                ": the inner dimensions differ (K = " + std::to_string(ka) + " vs " +
                std::to_string(kb) + ")");
  s.K = ka;
  s.M = s.a_is_vector ? 1 : a[a.size() - 2];
  s.N = s.b_is_vector ? 1 : b.back();
  s.a_batch = s.a_is_vector ? Shape{} : Shape(a.begin(), a.end() - 2);
  s.b_batch = s.b_is_vector ? Shape{} : Shape(b.begin(), b.end() - 2);

  const std::size_t rank = std::max(s.a_batch.size(), s.b_batch.size());
  s.batch.assign(rank, 1);
  for (std::size_t d = 0; d < rank; ++d) {
    const int64_t da = d + s.a_batch.size() >= rank ? s.a_batch[d + s.a_batch.size() - rank] : 1;
    const int64_t db = d + s.b_batch.size() >= rank ? s.b_batch[d + s.b_batch.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      fail(n, n.a + " has shape " + str(a) + " and " + n.b + " has shape " + str(b) +
                  ": batch dimensions " + std::to_string(da) + " and " + std::to_string(db) +
                  " do not broadcast (numpy.matmul rules)");
    s.batch[d] = da == 1 ? db : da;
  }
  s.out = s.batch;
  if (!s.a_is_vector) s.out.push_back(s.M);
  if (!s.b_is_vector) s.out.push_back(s.N);
  element_count(s.out);
  s.batch_count = element_count(s.batch);
  s.a_batch_count = element_count(s.a_batch);
  s.b_batch_count = element_count(s.b_batch);
  s.a_index = offsets_over(s.batch, batch_strides(s.batch, s.a_batch, contiguous_strides(s.a_batch)),
                           s.batch_count);
  s.b_index = offsets_over(s.batch, batch_strides(s.batch, s.b_batch, contiguous_strides(s.b_batch)),
                           s.batch_count);
  return s;
}

namespace {

// Shared body of the a- and b-parameter rules. `rows` selects the a side
// (vector [M], matrix tail [M,1]); otherwise the b side ([N], [1,N]).
ParamLayout operand_param_layout(const Shape& p, const std::string& pname, const MatmulShape& s,
                                 const OpNames& n, bool rows) {
  const std::string& tensor = rows ? n.a : n.b;
  const bool vector_operand = rows ? s.a_is_vector : s.b_is_vector;
  const Shape& op_batch = rows ? s.a_batch : s.b_batch;
  const int64_t len = rows ? s.M : s.N;
  const std::string what = rows ? "rows" : "columns";
  const std::string kind = rows ? "per-row" : "per-column";
  const std::string tail = rows ? "[...," + std::to_string(len) + ",1]" : "[...,1," + std::to_string(len) + "]";
  ParamLayout layout;
  layout.count = element_count(p);
  layout.batch_offset.assign(static_cast<std::size_t>(s.batch_count), 0);
  const auto bad = [&](const std::string& why) {
    fail(n, pname + " has shape " + str(p) + " but " + why);
  };
  if (p.empty() || (p.size() == 1 && p[0] == 1)) return layout;  // per tensor
  if (vector_operand)
    bad(tensor + " is 1-D, so " + pname + " must be per tensor (shape [] or [1])");
  if (p.size() == 1) {
    if (p[0] != len)
      bad(tensor + " has " + std::to_string(len) + " " + what + "; " + kind +
          " parameters need shape [" + std::to_string(len) + "] or " + tail);
    (rows ? layout.row_stride : layout.col_stride) = 1;
    return layout;
  }
  const int64_t inner_rows = p[p.size() - 2], inner_cols = p.back();
  const int64_t along = rows ? inner_rows : inner_cols;
  const int64_t across = rows ? inner_cols : inner_rows;
  if (across != 1 || (along != len && along != 1))
    bad(tensor + " has " + std::to_string(len) + " " + what + "; " + kind +
        " parameters need shape [" + std::to_string(len) + "] or " + tail);
  const Shape lead(p.begin(), p.end() - 2);
  if (lead.size() > op_batch.size())
    bad(tensor + " has batch dimensions " + str(op_batch) + "; a parameter may not have more");
  for (std::size_t d = 0; d < lead.size(); ++d) {
    const int64_t target = op_batch[op_batch.size() - lead.size() + d];
    if (lead[d] != 1 && lead[d] != target)
      bad(tensor + " has batch dimensions " + str(op_batch) + ", which " + pname +
          "'s leading dimensions do not broadcast to");
  }
  const auto strides = contiguous_strides(p);
  // Leading dims align with the operand's batch dims, which align (right) with the output's.
  const Shape op_lead_aligned = [&] {
    Shape full(op_batch.size(), 1);
    std::copy(lead.begin(), lead.end(), full.end() - static_cast<std::ptrdiff_t>(lead.size()));
    return full;
  }();
  std::vector<int64_t> lead_strides(op_batch.size(), 0);
  for (std::size_t d = 0; d < lead.size(); ++d)
    lead_strides[op_batch.size() - lead.size() + d] = strides[d];
  layout.batch_offset = offsets_over(s.batch, batch_strides(s.batch, op_lead_aligned, lead_strides),
                                     s.batch_count);
  if (along != 1) (rows ? layout.row_stride : layout.col_stride) = strides[p.size() - (rows ? 2 : 1)];
  return layout;
}

}  // namespace

ParamLayout a_param_layout(const Shape& p, const std::string& pname, const MatmulShape& s,
                           const OpNames& n) {
  return operand_param_layout(p, pname, s, n, true);
}

ParamLayout b_param_layout(const Shape& p, const std::string& pname, const MatmulShape& s,
                           const OpNames& n) {
  return operand_param_layout(p, pname, s, n, false);
}

ParamLayout y_param_layout(const Shape& p, const std::string& pname, const MatmulShape& s,
                           const OpNames& n) {
  ParamLayout layout;
  layout.count = element_count(p);
  if (p.size() == 1 && p[0] == 1) {  // [1] is per tensor, as for a and b, even for a scalar output
    layout.batch_offset.assign(static_cast<std::size_t>(s.batch_count), 0);
    return layout;
  }
  if (p.size() > s.out.size())
    fail(n, pname + " has shape " + str(p) + ", which does not broadcast to the output shape " +
                str(s.out) + " (more dimensions)");
  for (std::size_t d = 0; d < p.size(); ++d) {
    const int64_t target = s.out[s.out.size() - p.size() + d];
    if (p[d] != 1 && p[d] != target)
      fail(n, pname + " has shape " + str(p) + ", which does not broadcast to the output shape " +
                  str(s.out));
  }
  // Internal dims: batch..., M, N; the output shape drops M and/or N for 1-D operands.
  Shape internal = s.batch;
  internal.push_back(s.M);
  internal.push_back(s.N);
  std::vector<int64_t> present;  // internal dim index of each output dim
  for (std::size_t d = 0; d < s.batch.size(); ++d) present.push_back(static_cast<int64_t>(d));
  if (!s.a_is_vector) present.push_back(static_cast<int64_t>(s.batch.size()));
  if (!s.b_is_vector) present.push_back(static_cast<int64_t>(s.batch.size()) + 1);
  std::vector<int64_t> internal_strides(internal.size(), 0);
  const auto strides = contiguous_strides(p);
  const std::size_t shift = s.out.size() - p.size();
  for (std::size_t d = 0; d < p.size(); ++d)
    if (p[d] != 1) internal_strides[static_cast<std::size_t>(present[shift + d])] = strides[d];
  std::vector<int64_t> batch_part(internal_strides.begin(), internal_strides.end() - 2);
  layout.batch_offset = offsets_over(s.batch, batch_part, s.batch_count);
  layout.row_stride = internal_strides[internal.size() - 2];
  layout.col_stride = internal_strides[internal.size() - 1];
  return layout;
}

}  // namespace qmatmul::api

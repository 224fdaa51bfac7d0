#include "engine/anomaly.h"

#include <cmath>
#include <string>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/grad_math.h"
#include "core/context.h"
#include "core/error.h"
#include "kernels/finite.h"

namespace ag {

namespace {

// Fixed chunks (a reduction's grain), so the element reported does not
// depend on the thread count.
constexpr int64_t kChunk = grain(Work::Reduction);

// Index of the first NaN or infinity in n contiguous elements, or n; one
// kernel call when that is one chunk (no allocation).
int64_t first_bad_index(Context* ctx, DType dt, const char* data, int64_t n) {
  if (n <= kChunk) return kernels::first_nonfinite(dt, data, n);
  const size_t item = itemsize(dt);
  std::vector<int64_t> first(static_cast<size_t>((n + kChunk - 1) / kChunk), n);
  ctx->parallel_chunks(n, kChunk, [&](int64_t b, int64_t e) {
    const int64_t k = kernels::first_nonfinite(dt, data + static_cast<size_t>(b) * item, e - b);
    if (k < e - b) first[static_cast<size_t>(b / kChunk)] = b + k;
  });
  for (const int64_t k : first) {
    if (k < n) return k;
  }
  return n;
}

// Index of the first NaN or infinity of g (floating), or -1; its value in *bad.
int64_t first_nonfinite(const Tensor& g, double* bad) {
  const Tensor c = g->is_contiguous() ? g : grad_clone(g);
  const int64_t n = c->numel();
  const int64_t k = first_bad_index(c->context(), c->dtype(), c->data(), n);
  if (k == n) return -1;
  *bad = c->dtype() == DType::F64 ? c->data_as<double>()[k] : c->data_as<float>()[k];
  return k;
}

// Where gradient i of node goes, for the message.
std::string destination(const Node& node, size_t i) {
  const Edge& e = node.next_edge(i);
  if (!e.valid()) return "nowhere";
  if (!e.fn->is_accumulate_grad()) return str(e.fn->name(), " input ", e.input_nr);
  const Tensor leaf = static_cast<const AccumulateGrad&>(*e.fn).variable();
  return str("the leaf", leaf ? tag_suffix(*leaf) : std::string(), leaf ? " of shape " + shape_str(leaf->shape()) : "");
}

}  // namespace

void check_finite_gradients(const Node& node, const TensorList& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i] || !is_floating(out[i]->dtype())) continue;
    double bad = 0;
    const int64_t k = first_nonfinite(out[i], &bad);
    if (k < 0) continue;
    const char* what = std::isnan(bad) ? "NaN" : bad > 0 ? "inf" : "-inf";
    fail(AG_ERR_GRAPH, "anomaly: ", node.name(), node.tag() ? str(" (op tagged '", node.tag(), "')") : std::string(),
         " produced ", what, " in its gradient for input ", i, " (element ", k, " of shape ",
         shape_str(out[i]->shape()), ", going to ", destination(node, i), "); backward stopped there");
  }
}

}  // namespace ag

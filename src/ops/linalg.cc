// Linear algebra: matmul (NumPy semantics), bmm, linear, outer, dot. All are
// one batched product on the GEMM kernel (kernels/gemm.h), with 1-D operands
// promoted to matrices through views. Backward: da = g @ b^T, db = a^T @ g,
// summed back over broadcast batch dims, written with the same product, so
// create_graph gives higher derivatives.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ag/ops_linalg.h"
#include "kernels/gemm.h"
#include "ops/op_common.h"

namespace ag::ops {

namespace {

// x with its last two dims swapped (a view).
Tensor transpose_last2(const Tensor& x) { return transpose(x, -2, -1); }

Dims with_dims(const Dims& batch, int64_t r, int64_t c) {
  Dims d = batch;
  d.push_back(r);
  d.push_back(c);
  return d;
}

Dims batch_of(const Dims& shape) { return Dims(shape.data(), shape.size() - 2); }

// Flops per parallel chunk of GEMM tasks: ~40 us or more of work, so that
// the smallest task the grid makes for several threads (2^20 multiply-adds)
// is a chunk of its own.
constexpr double kChunkFlops = 2e6;

// y = a @ b over broadcast batch dims (a and b at least 2-D, inner dims
// checked), plus `bias` (a vector of n) added to every row when given, then
// relu when asked (in the GEMM's epilogue), into `out` of the broadcast
// shape. No graph.
void batched_product_into(const Tensor& a, const Tensor& b, const TensorImpl* bias, TensorImpl& out, bool relu) {
  const int na = a->ndim(), nb = b->ndim();
  const int64_t m = a->shape()[na - 2], k = a->shape()[na - 1], n = b->shape()[nb - 1];
  const Dims ba = batch_of(a->shape()), bb = batch_of(b->shape());
  const Dims batch = broadcast_shapes(ba, bb);
  TensorImpl* y = &out;
  if (y->numel() == 0) return;
  if (bias != nullptr) {  // y rows = bias, then y += a @ b
    Dims bs;
    bs.resize(y->ndim());
    for (int i = 0; i < bs.size(); ++i) bs[i] = 0;
    bs[bs.size() - 1] = bias->strides()[0];
    kernels::copy(y->dtype(), y->shape(), kernels::View{bias->data(), &bs}, y->dtype(), y->data(), y->strides());
  }
  const size_t item = itemsize(a->dtype());
  kernels::GemmArgs g{a->dtype(), m,   n,   k,   1.0, a->data(), a->strides()[na - 2], a->strides()[na - 1],
                      b->data(),  b->strides()[nb - 2], b->strides()[nb - 1], bias ? 1.0 : 0.0, y->data(), n};
  // Offsets (elements) of each product's a, b and y.
  const int64_t count = numel_of(batch);
  std::vector<int64_t> offs;  // element offsets of a and b per product, unless folded
  const Dims sa = broadcast_strides(ba, batch_of(a->strides()), batch);
  const Dims sb = broadcast_strides(bb, batch_of(b->strides()), batch);
  bool fold = numel_of(bb) == 1;  // one b for all: a's batch can become rows of one product
  int64_t expected = a->strides()[na - 2] * m;
  for (int i = batch.size() - 1; i >= 0 && fold; --i) {
    fold = batch[i] == 1 || sa[i] == expected;
    expected *= batch[i];
  }
  if (fold) g.m = m * count;
  const int64_t products = fold ? 1 : count;
  if (!fold) {  // walk the batch index, row-major
    offs.resize(static_cast<size_t>(2 * count));
    Dims idx;
    idx.resize(batch.size());
    for (int i = 0; i < idx.size(); ++i) idx[i] = 0;
    int64_t oa = 0, ob = 0;
    for (int64_t t = 0; t < count; ++t) {
      offs[2 * t] = oa;
      offs[2 * t + 1] = ob;
      for (int i = batch.size() - 1; i >= 0; --i) {
        oa += sa[i];
        ob += sb[i];
        if (++idx[i] < batch[i]) break;
        oa -= sa[i] * batch[i];
        ob -= sb[i] * batch[i];
        idx[i] = 0;
      }
    }
  }
  g.threads = a->context()->concurrency();
  g.relu = relu;
  // A product summed in two parts over k (kernels/gemm.h) leaves its second
  // part in a buffer, added into y by a finishing pass.
  const size_t part_bytes = kernels::gemm_partial_bytes(g);
  const kernels::PartialBuffer buffer(part_bytes * static_cast<size_t>(products));
  char* partials = buffer.get();
  auto product_args = [&](int64_t p) {
    kernels::GemmArgs gp = g;
    if (!fold) {
      gp.a += offs[2 * p] * static_cast<int64_t>(item);
      gp.b += offs[2 * p + 1] * static_cast<int64_t>(item);
    }
    gp.c += p * m * n * static_cast<int64_t>(item);
    if (partials) gp.partial = partials + static_cast<size_t>(p) * part_bytes;
    return gp;
  };
  const int64_t tasks = kernels::gemm_tasks(g);
  const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkFlops / std::max(1.0, kernels::gemm_task_flops(g))));
  for_ranges(a->context(), products * tasks, chunk, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) kernels::gemm_task(product_args(t / tasks), t % tasks);
  });
  const int64_t finish = kernels::gemm_finish_tasks(g);
  if (finish == 0) return;
  // One finishing task a chunk, though they are small: the two halves of the
  // sum lie in two threads' caches, and each lane fetches half.
  for_ranges(a->context(), products * finish, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) kernels::gemm_finish(product_args(t / finish), t % finish);
  });
}

Tensor batched_product(const Tensor& a, const Tensor& b, const TensorImpl* bias, bool relu = false) {
  const int na = a->ndim(), nb = b->ndim();
  const Dims batch = broadcast_shapes(batch_of(a->shape()), batch_of(b->shape()));
  Tensor y = empty(a->context(), a->dtype(), with_dims(batch, a->shape()[na - 2], b->shape()[nb - 1]));
  batched_product_into(a, b, bias, *y, relu);
  trace(*y, [&] {
    return [a, b, bias = Tensor::share(const_cast<TensorImpl*>(bias)), y, relu] {
      batched_product_into(a, b, bias.get(), *y, relu);
    };
  });
  return y;
}

// ---- shape checks, with the facts in the message ----

void check_operands(const Tensor& a, const Tensor& b) {
  check_same(*a, *b);
  check_floating(*a);
}

std::string shapes_of(const Tensor& a, const Tensor& b) {
  return "cannot multiply shapes " + shape_str(a->shape()) + " and " + shape_str(b->shape());
}

void check_inner(const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  if (ka != kb) fail(AG_ERR_SHAPE, shapes_of(a, b), ": inner dims ", ka, " and ", kb, " differ");
}

// Batch dims (all but the last two of a matrix operand) broadcast.
void check_batch(const Tensor& a, const Tensor& b, const Dims& ba, const Dims& bb) {
  for (int i = 1; i <= ba.size() && i <= bb.size(); ++i) {
    const int64_t x = ba[ba.size() - i], y = bb[bb.size() - i];
    if (x != y && x != 1 && y != 1) {
      fail(AG_ERR_SHAPE, shapes_of(a, b), ": batch dims ", shape_str(ba), " and ", shape_str(bb), " do not broadcast");
    }
  }
}

// a @ b of matrices with batch dims (at least 2-D each); da = g @ b^T,
// db = a^T @ g, summed over broadcast batch dims. Saves b if a needs grad,
// a if b does.
Tensor product(const Tensor& a, const Tensor& b);

struct MatmulBackward final : SavingNode<2> {
  const char* name() const override { return "MatmulBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    if (needs_input_grad(0)) out[0] = reduce_to(product(g[0], transpose_last2(saved[1].unpack(*this))), input_shape(0));
    if (needs_input_grad(1)) out[1] = reduce_to(product(transpose_last2(saved[0].unpack(*this)), g[0]), input_shape(1));
  }
};

Tensor product(const Tensor& a, const Tensor& b) {
  Tensor y = batched_product(a, b, nullptr);
  if (should_record({a.get(), b.get()})) {
    auto n = record<MatmulBackward>({a.get(), b.get()}, y);
    if (n->needs_input_grad(1)) n->saved[0].save(a, false);
    if (n->needs_input_grad(0)) n->saved[1].save(b, false);
  }
  return y;
}

// linear on a matrix x (at least 2-D): y = act(z), z = x @ w^T + bias;
// dz = act'(g), dx = dz @ w, dw = dz^T @ x summed over batch dims, dbias =
// dz summed to (out).
struct LinearBackward final : SavingNode<3> {
  LinearBackward(bool has_bias, bool has_relu) : bias(has_bias), relu(has_relu) {}
  const char* name() const override { return relu ? "LinearReluBackward" : "LinearBackward"; }
  void apply(TensorList& g, TensorList& out) override {
    const Tensor dz = relu ? relu_backward(std::move(g[0]), saved[2].unpack(*this)) : g[0];
    if (needs_input_grad(0)) out[0] = product(dz, saved[1].unpack(*this));
    if (needs_input_grad(1)) out[1] = reduce_to(product(transpose_last2(dz), saved[0].unpack(*this)), input_shape(1));
    if (bias && needs_input_grad(2)) out[2] = reduce_to(dz, input_shape(2));
  }
  bool bias, relu;
};

}  // namespace

// matmul: NumPy semantics. A 1-D a is a row (1, k), a 1-D b a column (k, 1),
// and the added dim is removed from the result; batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b) {
  check_operands(a, b);
  if (a->ndim() == 0 || b->ndim() == 0) fail(AG_ERR_SHAPE, shapes_of(a, b), ": both need at least 1 dim");
  const int64_t k = a->shape()[a->ndim() - 1];
  check_inner(a, b, k, b->shape()[b->ndim() == 1 ? 0 : b->ndim() - 2]);
  const Tensor a2 = a->ndim() == 1 ? reshape(a, Dims{1, k}) : a;
  const Tensor b2 = b->ndim() == 1 ? reshape(b, Dims{k, 1}) : b;
  check_batch(a, b, batch_of(a2->shape()), batch_of(b2->shape()));
  Tensor y = product(a2, b2);
  if (a->ndim() > 1 && b->ndim() > 1) return y;
  Dims shape = batch_of(y->shape());
  if (a->ndim() > 1) shape.push_back(a->shape()[a->ndim() - 2]);
  if (b->ndim() > 1) shape.push_back(b->shape()[b->ndim() - 1]);
  return reshape(y, shape);
}

// bmm: (B, m, k) @ (B, k, n), no broadcasting.
Tensor bmm(const Tensor& a, const Tensor& b) {
  check_operands(a, b);
  if (a->ndim() != 3 || b->ndim() != 3) fail(AG_ERR_SHAPE, shapes_of(a, b), ": both must be 3-D");
  if (a->shape()[0] != b->shape()[0]) {
    fail(AG_ERR_SHAPE, shapes_of(a, b), ": batch sizes ", a->shape()[0], " and ", b->shape()[0], " differ");
  }
  check_inner(a, b, a->shape()[2], b->shape()[1]);
  return product(a, b);
}

// dot: <a, b> of two vectors of one size, a 0-dim result.
Tensor dot(const Tensor& a, const Tensor& b) {
  check_operands(a, b);
  if (a->ndim() != 1 || b->ndim() != 1) fail(AG_ERR_SHAPE, shapes_of(a, b), ": both must be 1-D");
  if (a->shape()[0] != b->shape()[0]) {
    fail(AG_ERR_SHAPE, shapes_of(a, b), ": sizes ", a->shape()[0], " and ", b->shape()[0], " differ");
  }
  return matmul(a, b);
}

// outer: y[i, j] = a[i] * b[j], a product with k = 1.
Tensor outer(const Tensor& a, const Tensor& b) {
  check_operands(a, b);
  if (a->ndim() != 1 || b->ndim() != 1) fail(AG_ERR_SHAPE, shapes_of(a, b), ": both must be 1-D");
  return product(reshape(a, Dims{a->shape()[0], 1}), reshape(b, Dims{1, b->shape()[0]}));
}

// linear_act: y = act(x @ w^T + bias) with w (out, in), x (..., in), bias
// (out) or none; the bias initializes y and the product adds to it (one pass
// over y), relu is applied where the product writes.
Tensor linear_act(const Tensor& x, const Tensor& w, const Tensor& bias, int32_t activation) {
  check_same(*x, *w);
  check_floating(*x);
  if (bias) check_same(*x, *bias);
  if (w->ndim() != 2) fail(AG_ERR_SHAPE, "weight must be 2-D (out_features, in_features), got shape ", shape_str(w->shape()));
  if (x->ndim() == 0) fail(AG_ERR_SHAPE, "input must have at least 1 dim, got shape ()");
  const int64_t out = w->shape()[0], in = w->shape()[1];
  if (x->shape()[x->ndim() - 1] != in) {
    fail(AG_ERR_SHAPE, "input shape ", shape_str(x->shape()), " does not fit weight shape ", shape_str(w->shape()),
         ": in_features ", x->shape()[x->ndim() - 1], " and ", in, " differ");
  }
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != out)) {
    fail(AG_ERR_SHAPE, "bias shape ", shape_str(bias->shape()), " does not fit weight shape ", shape_str(w->shape()),
         ": expected (", out, ")");
  }
  const bool relu = activation == AG_ACTIVATION_RELU;
  const Tensor x2 = x->ndim() == 1 ? reshape(x, Dims{1, in}) : x;
  Tensor wt;
  {
    GradModeGuard no_graph(false);  // the node below records the whole product
    wt = transpose_last2(w);
  }
  Tensor y = batched_product(x2, wt, bias.get(), relu);
  const bool record_it = bias ? should_record({x2.get(), w.get(), bias.get()}) : should_record({x2.get(), w.get()});
  if (record_it) {
    auto n = bias ? record<LinearBackward>({x2.get(), w.get(), bias.get()}, y, true, relu)
                  : record<LinearBackward>({x2.get(), w.get()}, y, false, relu);
    if (n->needs_input_grad(1)) n->saved[0].save(x2, false);
    if (n->needs_input_grad(0)) n->saved[1].save(w, false);
    if (relu) n->saved[2].save(y, true);
  }
  return x->ndim() == 1 ? reshape(y, Dims{out}) : y;
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) { return linear_act(x, w, bias, AG_ACTIVATION_NONE); }

}  // namespace ag::ops

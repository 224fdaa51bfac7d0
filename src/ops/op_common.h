// What every op block uses: argument checks with precise messages, kernel
// views, and recording a node.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

#include "autograd/grad_math.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/saved_tensor.h"
#include "core/error.h"
#include "core/recorder.h"
#include "core/parallel.h"
#include "kernels/kernels.h"
#include "ops/ops.h"

namespace ag::ops {

inline kernels::View view_of(const TensorImpl& t) { return kernels::View{t.data(), &t.strides()}; }

// How an elementwise kernel may read t, an input that broadcasts to an
// output of n elements, without walking shapes: as n contiguous elements
// (Row), as one element for all (One: a scalar, or one expanded), or neither.
enum class FlatRead { Row, One, No };
inline FlatRead flat_read(const TensorImpl& t, int64_t n) {
  if (t.numel() == n && t.is_contiguous()) return FlatRead::Row;
  return kernels::is_broadcast_scalar(t.shape(), t.strides()) ? FlatRead::One : FlatRead::No;
}

// Runs kernel(begin, end) over [0, n) in chunks of per_chunk units, in
// parallel in the context's arena where that pays. The one place where the
// op files split work: every helper below and every op goes through it.
template <class F>
void for_ranges(Context* ctx, int64_t n, int64_t per_chunk, F&& kernel) {
  ctx->parallel_chunks(n, per_chunk, std::forward<F>(kernel));
}

// Runs kernel(offset, length) over the n elements of contiguous tensors in
// equal chunks of work class w (even_chunk), in parallel where that pays.
template <class F>
void for_chunks(Context* ctx, int64_t n, F&& kernel, Work w = Work::Elementwise) {
  for_ranges(ctx, n, even_chunk(n, w, ctx->concurrency()), [&](int64_t b, int64_t e) { kernel(b, e - b); });
}

// Runs kernel(row_begin, row_end) over the rows of dim `dim` of `shape` (a
// 0-dim shape has one row) in chunks of about one grain of work class w
// (core/parallel.h), in parallel where that pays; for kernels whose outputs
// are independent.
template <class F>
void for_rows(Context* ctx, const Dims& shape, int dim, F&& kernel, Work w = Work::Elementwise) {
  const int64_t n = numel_of(shape);
  const int64_t rows = dim < shape.size() ? shape[dim] : 1;
  if (n <= grain(w) || rows <= 1) {
    kernel(int64_t{0}, rows);
    return;
  }
  for_ranges(ctx, rows, even_units(rows, n / rows, w, ctx->concurrency()), [&](int64_t b, int64_t e) { kernel(b, e); });
}

// Runs kernel(sub_shape, in_offsets, out_offset) over chunks of whole slices
// of the first dim of `shape` with a size above 1: for kernels over N strided
// or broadcast inputs (element strides `strides`) and a contiguous output.
// Offsets are in elements.
template <int N, class F>
void for_slices(Context* ctx, const Dims& shape, const Dims* const (&strides)[N], F&& kernel,
                Work w = Work::Elementwise) {
  int dim = 0;
  while (dim < shape.size() && shape[dim] == 1) ++dim;
  const int64_t slice = dim < shape.size() && shape[dim] > 0 ? numel_of(shape) / shape[dim] : 0;
  for_rows(
      ctx, shape, dim,
      [&](int64_t b, int64_t e) {
        Dims sub = shape;
        if (dim < shape.size()) sub[dim] = e - b;
        int64_t in_off[N];
        for (int k = 0; k < N; ++k) in_off[k] = dim < shape.size() ? b * (*strides[k])[dim] : 0;
        kernel(sub, in_off, b * slice);
      },
      w);
}

// Runs kernel(sub_shape, views, out_offset) over N inputs broadcast to
// `shape`, for an elementwise kernel of work class w writing a contiguous
// output of that shape (out_offset in elements): parallel chunks when every
// input is contiguous with that shape, else slices of the broadcast views.
// The one driver of the elementwise ops of 1, 2 or 3 inputs.
template <int N, class F>
void for_elementwise(const TensorImpl* const (&inputs)[N], const Dims& shape, F&& kernel, Work w = Work::Elementwise) {
  Context* ctx = inputs[0]->context();
  bool flat = true;
  for (const TensorImpl* t : inputs) flat = flat && t->shape() == shape && t->is_contiguous();
  if (flat) {
    const Dims unit{1};
    for_chunks(
        ctx, numel_of(shape),
        [&](int64_t off, int64_t len) {
          kernels::View v[N];
          for (int k = 0; k < N; ++k) {
            v[k] = kernels::View{inputs[k]->data() + off * static_cast<int64_t>(itemsize(inputs[k]->dtype())), &unit};
          }
          kernel(Dims{len}, v, off);
        },
        w);
    return;
  }
  Dims strides[N];
  const Dims* stride_ptrs[N];
  for (int k = 0; k < N; ++k) {
    strides[k] = broadcast_strides(inputs[k]->shape(), inputs[k]->strides(), shape);
    stride_ptrs[k] = &strides[k];
  }
  for_slices(
      ctx, shape, stride_ptrs,
      [&](const Dims& sub, const int64_t* in, int64_t out) {
        kernels::View v[N];
        for (int k = 0; k < N; ++k) {
          v[k] = kernels::View{inputs[k]->data() + in[k] * static_cast<int64_t>(itemsize(inputs[k]->dtype())),
                               &strides[k]};
        }
        kernel(sub, v, out);
      },
      w);
}

// The work class of an elementwise kernel: a few instructions per element,
// or a polynomial/library call (transcendental, the default for new kinds:
// a finer grain is never slower than one thread).
inline Work work_of(kernels::UnaryKind k) {
  using K = kernels::UnaryKind;
  switch (k) {
    case K::Neg: case K::Abs: case K::Sign: case K::Square: case K::Reciprocal: case K::Sqrt: case K::Rsqrt:
    case K::Relu: case K::LeakyRelu: case K::Clamp: case K::Floor: case K::Ceil: case K::Round: case K::Trunc:
    case K::InsideOpen: case K::InsideClosed:
      return Work::Elementwise;
    default:
      return Work::Transcendental;
  }
}
inline Work work_of(kernels::BinaryKind k) {
  using K = kernels::BinaryKind;
  switch (k) {
    case K::Pow: case K::Atan2: case K::Fmod: case K::Remainder: case K::GeluBackward: case K::GeluTanhBackward:
    case K::SiluBackward: case K::MishBackward: case K::Logaddexp:
      return Work::Transcendental;
    default:
      return Work::Elementwise;
  }
}

// kernels::copy (any dtypes, any strides on both sides) and kernels::fill,
// in parallel row blocks of the outermost dim above 1 when large: copy-class
// work when both sides are contiguous, else a strided gather.
void copy_into(Context* ctx, DType src_dt, const Dims& shape, kernels::View src, DType dst_dt, char* dst,
               const Dims& dst_strides);
// A contiguous copy of x for an op that then writes into it with a kernel
// replay would not repeat (index_add, scatter, index_fill, ...): no replay
// step, so that a recording refuses the op instead of replaying the copy
// alone (ag/replay.h: such ops are not replayable, and their indices are
// not checked again on replay).
Tensor copy_for_writes(const Tensor& x);
// The same for a tensor of `value` (full() is a replay step: it fills again
// on replay, over what an untraced write put there).
Tensor full_for_writes(Context* ctx, DType dt, const Dims& shape, double value);
void fill_into(Context* ctx, DType dt, char* out, int64_t n, double value);

inline void check_floating(const TensorImpl& t) {
  if (!is_floating(t.dtype())) {
    fail(AG_ERR_DTYPE, "expects a floating tensor (f32 or f64), got ", dtype_name(t.dtype()));
  }
}

// Same context and same dtype (no implicit promotion).
inline void check_same(const TensorImpl& a, const TensorImpl& b) {
  if (a.context() != b.context()) fail(AG_ERR_CONTEXT, "the tensors belong to different contexts");
  if (a.dtype() != b.dtype()) {
    fail(AG_ERR_DTYPE, "dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
         " differ (no implicit promotion; convert with ag_op_cast)");
  }
}

inline bool should_record(std::initializer_list<const TensorImpl*> inputs) {
  if (!grad_enabled()) return false;
  for (const TensorImpl* t : inputs) {
    if (requires_grad(*t)) return true;
  }
  return false;
}

// Creates node N, wires it to the inputs and makes `out` its output, which
// then owns it; returns the node, for the op to save tensors in.
template <class N, class... Args>
N* record(std::initializer_list<const TensorImpl*> inputs, Tensor& out, Args&&... args) {
  // Without arguments, default-initialized (node members all have
  // initializers): `new N()` would zero fill the whole node first.
  Ref<N> n;
  if constexpr (sizeof...(Args) == 0) {
    n = Ref<N>::adopt(new N);
  } else {
    n = Ref<N>::adopt(new N(std::forward<Args>(args)...));
  }
  collect_next_edges(*n, inputs);
  N* node = n.get();
  set_history(Ref<Node>(std::move(n)), *out);
  return node;
}

// A node that keeps N tensors for its backward and frees them after it ran.
template <int N>
struct SavingNode : Node {
  void release_variables() override {
    for (SavedTensor& s : saved) s.release();
  }
  size_t saved_bytes() const override {
    size_t n = 0;
    for (const SavedTensor& s : saved) n += s.nbytes();
    return n;
  }
  bool saves(const TensorImpl* t) const override {
    for (const SavedTensor& s : saved) {
      if (s.holds(t)) return true;
    }
    return false;
  }
  SavedTensor saved[N];
};

// Whether an op may write a result of `shape` and `dtype` into t, a
// temporary the caller gives up: nobody else sees t or its memory (so the
// write is invisible; host memory the host always sees, and read-only memory
// is never written), t is outside any graph, and it has the result's layout.
// Never while recording for replay: a buffer that replay rewrites must be
// the output of one step only.
inline bool reusable_as_result(const Tensor& t, DType dtype, const Dims& shape) {
  if (recording()) [[unlikely]] return false;
  const Storage& s = *t->storage();
  return t->is_private() && !s.is_host_memory() && !s.read_only() && !t->grad_fn() && !t->autograd_meta() &&
         t->dtype() == dtype && t->shape() == shape && t->is_contiguous();
}

// g[i] for its last use in a backward formula of node n: moved out, so that
// an op taking it as a temporary may write its result into its buffer; a
// copy when n has hooks (post hooks read the gradients after the node ran).
inline Tensor last_use(const Node& n, TensorList& g, size_t i) { return n.hooks() ? g[i] : std::move(g[i]); }

// t itself if contiguous, else a contiguous copy (no graph: for kernels that
// read contiguous memory; the op records its node on t).
inline Tensor contiguous_data(const Tensor& t) { return t->is_contiguous() ? t : grad_clone(t); }
// The forward passes of the elementwise families (unary.cc, binary.cc):
// dtype checks, the kernel call, parallel chunks for large contiguous
// inputs. No graph.
Tensor unary_forward(const Tensor& x, kernels::UnaryKind k, double attr = 0.0, double attr2 = 0.0);
Tensor binary_forward(const Tensor& a, const Tensor& b, kernels::BinaryKind k);
// y = k(a, b) for a contiguous y of the broadcast shape `shape`, in parallel
// chunks where that pays; y may be a itself (every kernel reads an element
// before it writes it). No graph. One element each (of any shape), most
// calls of small graphs, goes straight to the kernel, without a call frame
// of its own.
void binary_into_elements(const Tensor& a, const Tensor& b, kernels::BinaryKind k, const Dims& shape, TensorImpl& y);
inline void binary_into(const Tensor& a, const Tensor& b, kernels::BinaryKind k, const Dims& shape, TensorImpl& y) {
  if (y.numel() == 1 && a->numel() == 1 && b->numel() == 1 &&
      kernels::binary_scalar(k, a->dtype(), a->data(), b->data(), y.data())) {
    return;
  }
  binary_into_elements(a, b, k, shape, y);
}
// a = k(a, b) in a's buffer, with b the elements of a tensor of a's dtype
// and shape, contiguous, given by address (a saved output kept as its
// storage alone): the bits binary_into gives. False, nothing done, unless
// a can take the result (reusable_as_result, so never while recording) and
// k has vector rows. No graph.
bool binary_in_place_over(const Tensor& a, const char* b, kernels::BinaryKind k);

// Constant masks of backward formulas (no graph), in x's dtype: 1 where
// lo < x < hi (closed: lo <= x <= hi), else 0.
inline Tensor inside(const Tensor& x, double lo, double hi, bool closed) {
  return unary_forward(x, closed ? kernels::UnaryKind::InsideClosed : kernels::UnaryKind::InsideOpen, lo, hi);
}

// g where `drop` (bool) is false, else 0: a select, not a product with a 0/1
// mask, so that a NaN or inf arriving in g where the mask is 0 gives 0 (as
// PyTorch's masked backwards do). Differentiable in g (double backward).
inline Tensor zero_where(const Tensor& drop, const Tensor& g) { return where(drop, scalar_like(g, 0.0), g); }

// Gradient of a broadcast input: summed back to its shape when it differs.
inline Tensor reduce_to(const Tensor& g, const Dims& shape) {
  return g->shape() == shape ? g : sum_to_size(g, shape);
}
// The same for a temporary: passed on without a new reference.
inline Tensor reduce_to(Tensor&& g, const Dims& shape) {
  return g->shape() == shape ? std::move(g) : sum_to_size(g, shape);
}

// g as `shape`, which g's shape broadcasts to: a shape recorded from a
// tensor (a reduction's input), so expand's checks of a user's shape are
// skipped. A view, recorded like expand's.
Tensor expand_to_shape(const Tensor& g, const Dims& shape);

// A possibly negative dim wrapped into [0, ndim), as PyTorch does; `what`
// names the argument in the message. With scalar_as_1d (reductions, softmax,
// scans) a 0-dim tensor takes dim 0 or -1, as in PyTorch.
inline int wrap_dim(int64_t dim, int ndim, const char* what = "dim", bool scalar_as_1d = false) {
  const int n = ndim == 0 && scalar_as_1d ? 1 : ndim;
  if (dim < -n || dim >= n) {
    if (n == 0) fail(AG_ERR_INVALID_ARGUMENT, what, " ", dim, " is out of range for a tensor of 0 dims");
    fail(AG_ERR_INVALID_ARGUMENT, what, " ", dim, " is out of range for a tensor of ", ndim, " dims (expected ", -n,
         "..", n - 1, ")");
  }
  return static_cast<int>(dim < 0 ? dim + n : dim);
}

// a * b + c, or AG_ERR_INVALID_ARGUMENT naming `what` when it overflows
// int64: window geometry (spans, padded and transposed sizes) is computed
// from user arguments that may be anything.
inline int64_t checked_mul_add(int64_t a, int64_t b, int64_t c, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r)) {
    fail(AG_ERR_INVALID_ARGUMENT, what, " overflows int64 (", a, " * ", b, " + ", c, ")");
  }
  return r;
}

// A double attribute that must be finite; `what` names it in the message.
inline void check_finite(double v, const char* what) {
  if (!std::isfinite(v)) fail(AG_ERR_INVALID_ARGUMENT, what, " ", v, " is not finite");
}
// A node of a binary op: two saved tensors. The input shapes, for summing
// broadcast gradients back, come from Node::input_shape.
using BinaryNode = SavingNode<2>;

}  // namespace ag::ops

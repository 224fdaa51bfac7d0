// The internal C++ op API: one function per row of ops.def, with the
// signature its family gives. Ops record a node when grad mode is on and an
// input requires grad; backward formulas call these same functions, so
// create_graph records the backward pass too. Errors throw ag::Error.
#pragma once

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor_impl.h"

namespace ag::ops {

#define AG_DECL_UNARY(name) Tensor name(const Tensor& x);
#define AG_DECL_UNARY_SCALAR(name) Tensor name(const Tensor& x, double attr);
#define AG_DECL_UNARY_SCALAR2(name) Tensor name(const Tensor& x, double attr, double attr2);
#define AG_DECL_BINARY(name) Tensor name(const Tensor& a, const Tensor& b);
#define AG_DECL_COMPARE(name) Tensor name(const Tensor& a, const Tensor& b);
#define AG_DECL_REDUCE_ALL(name) Tensor name(const Tensor& x);
#define AG_DECL_SHAPE(name) Tensor name(const Tensor& x, const Dims& shape);
#define AG_DECL_DTYPE(name) Tensor name(const Tensor& x, DType dtype);
#define AG_DECL_CUSTOM(name)  // declared by hand below
#define AG_OP(name, family) AG_DECL_##family(name)
#include "ops/ops.def"
#undef AG_OP
#undef AG_DECL_UNARY
#undef AG_DECL_UNARY_SCALAR
#undef AG_DECL_UNARY_SCALAR2
#undef AG_DECL_BINARY
#undef AG_DECL_COMPARE
#undef AG_DECL_REDUCE_ALL
#undef AG_DECL_SHAPE
#undef AG_DECL_DTYPE
#undef AG_DECL_CUSTOM

// Elementwise (CUSTOM rows of ops.def).
// where: cond ? a : b, cond bool, a and b floating, all three broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// lerp: a + weight * (b - a), all three broadcast.
Tensor lerp(const Tensor& a, const Tensor& b, const Tensor& weight);

// Helpers for backward formulas (not ops themselves: no graph).
Tensor scalar_like(const Tensor& t, double value);  // 0-dim, t's dtype and context
Tensor zeros_like(const Tensor& t);
Tensor full(Context* ctx, DType dtype, const Dims& shape, double value);

}  // namespace ag::ops

// Argument checks and index helpers shared by the indexing ops (index.cc,
// scatter.cc). Indices are i64 and never wrap.
#pragma once

#include <string>
#include <vector>

#include "ops/op_common.h"

namespace ag::ops {

// index is i64 and in x's context; `what` names it in messages.
void check_index_dtype(const TensorImpl& index, const TensorImpl& x, const char* what);
// Row-major multi-index of flat position i in shape, "(1,2)".
std::string position_str(const Dims& shape, int64_t i);
// Every value of the i64 tensor `index` lies in [0, bound); `where` names the
// bound: "dim 0 of size 5".
void check_range(const Tensor& index, int64_t bound, const std::string& where, const char* what = "index");
// "dim d of size n" for x.
std::string dim_str(const TensorImpl& x, int d);
// index (1-D) read as a tensor of `shape`, varying along dim only.
Dims along_dim_strides(const TensorImpl& index, const Dims& shape, int dim);
void check_1d(const TensorImpl& index);
// An i64 tensor of `shape` holding host-computed indices v (row-major). No
// recorded step writes it, so recording for replay refuses the op using it.
Tensor i64_tensor(Context* ctx, const Dims& shape, const std::vector<int64_t>& v);
// x and src floating, of one dtype and context.
void check_add_inputs(const TensorImpl& x, const TensorImpl& src);
// index has x's ndim and no dim larger than x's, except along `dim` when
// along_dim is true.
void check_index_fits(const TensorImpl& index, const TensorImpl& x, int dim, bool along_dim, const char* x_name);

// t zero-padded at the end of each dim up to `shape` (the gradient of a
// source larger than its index).
Tensor zero_pad_to(const Tensor& t, const Dims& shape);

}  // namespace ag::ops

// Gradient-check cases of convolution and pooling (family CUSTOM): stride,
// padding, dilation, groups, non-square kernels, unbatched and transposed
// (non-contiguous) inputs, pooling with padding and ceil_mode. Max pooling
// samples distinct random values, so ties (kinks) are improbable.
#include <array>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using P = std::array<int64_t, 2>;
using Args = std::vector<ag_tensor*>;

// x with dims 2 and 3 swapped: a non-contiguous view.
ag_status transposed(ag_tensor** out, ag_tensor* x) { return ag_op_transpose(out, x, 2, 3); }

}  // namespace

Cases cases_unfold() {
  Cases c;
  auto unfold = [](const std::string& label, Shape x, P k, P d, P p, P s) {
    return Case{label, {Input{std::move(x)}}, [k, d, p, s](ag_tensor** out, const Args& a) {
                  return ag_op_unfold(out, a[0], k.data(), d.data(), p.data(), s.data());
                }};
  };
  c.push_back(unfold("unfold", {2, 2, 4, 5}, {2, 3}, {1, 1}, {0, 0}, {1, 1}));
  c.push_back(unfold("unfold(dilation 2, padding 1, stride 2)", {1, 2, 6, 5}, {3, 3}, {2, 2}, {1, 1}, {2, 2}));
  c.push_back(unfold("unfold(3-D, stride (1, 2))", {2, 4, 4}, {2, 2}, {1, 1}, {1, 0}, {1, 2}));
  return c;
}

Cases cases_fold() {
  Cases c;
  auto fold = [](const std::string& label, Shape x, P o, P k, P d, P p, P s) {
    return Case{label, {Input{std::move(x)}}, [o, k, d, p, s](ag_tensor** out, const Args& a) {
                  return ag_op_fold(out, a[0], o.data(), k.data(), d.data(), p.data(), s.data());
                }};
  };
  c.push_back(fold("fold", {2, 8, 12}, {4, 5}, {2, 2}, {1, 1}, {0, 0}, {1, 1}));
  c.push_back(fold("fold(stride 2, padding 1)", {1, 9, 9}, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {2, 2}));
  c.push_back(fold("fold(2-D, dilation 2)", {8, 4}, {4, 4}, {2, 2}, {2, 2}, {0, 0}, {1, 1}));
  return c;
}

Cases cases_conv2d() {
  Cases c;
  auto conv = [](const std::string& label, Shape x, Shape w, bool bias, P s, P p, P d, int64_t g, bool t = false) {
    std::vector<Input> in{Input{std::move(x)}, Input{std::move(w)}};
    if (bias) in.push_back(Input{{in[1].shape[0]}});
    return Case{label, in, [bias, s, p, d, g, t](ag_tensor** out, const Args& a) {
                  ag_tensor* x = a[0];
                  ag_tensor* view = nullptr;
                  if (t) {
                    const ag_status st = transposed(&view, a[0]);
                    if (st != AG_OK) return st;
                    x = view;
                  }
                  const ag_status st = ag_op_conv2d(out, x, a[1], bias ? a[2] : nullptr, s.data(), p.data(), d.data(), g);
                  ag_tensor_release(view);
                  return st;
                }};
  };
  c.push_back(conv("conv2d", {2, 3, 5, 5}, {4, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1));
  c.push_back(conv("conv2d(stride 2, padding 1)", {1, 2, 6, 5}, {3, 2, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 1));
  c.push_back(conv("conv2d(dilation 2, no bias)", {1, 2, 6, 6}, {2, 2, 2, 3}, false, {1, 1}, {0, 1}, {2, 2}, 1));
  c.push_back(conv("conv2d(groups 2)", {2, 4, 4, 5}, {6, 2, 3, 2}, true, {1, 2}, {1, 0}, {1, 1}, 2));
  c.push_back(conv("conv2d(non-square 3x1, stride (2, 1))", {1, 3, 7, 4}, {2, 3, 3, 1}, true, {2, 1}, {0, 0}, {1, 1}, 1));
  c.push_back(conv("conv2d(3-D input)", {2, 4, 4}, {3, 2, 2, 2}, true, {1, 1}, {0, 0}, {1, 1}, 1));
  c.push_back(conv("conv2d(transposed input)", {1, 2, 5, 4}, {2, 2, 2, 2}, true, {1, 1}, {1, 1}, {1, 1}, 1, true));
  return c;
}

Cases cases_conv1d() {
  Cases c;
  auto conv = [](const std::string& label, Shape x, Shape w, bool bias, int64_t s, int64_t p, int64_t d, int64_t g) {
    std::vector<Input> in{Input{std::move(x)}, Input{std::move(w)}};
    if (bias) in.push_back(Input{{in[1].shape[0]}});
    return Case{label, in, [bias, s, p, d, g](ag_tensor** out, const Args& a) {
                  return ag_op_conv1d(out, a[0], a[1], bias ? a[2] : nullptr, s, p, d, g);
                }};
  };
  c.push_back(conv("conv1d", {2, 3, 7}, {4, 3, 3}, true, 1, 0, 1, 1));
  c.push_back(conv("conv1d(stride 2, padding 2, dilation 2)", {1, 2, 9}, {3, 2, 3}, true, 2, 2, 2, 1));
  c.push_back(conv("conv1d(groups 2, no bias)", {2, 4, 6}, {2, 2, 2}, false, 1, 1, 1, 2));
  c.push_back(conv("conv1d(2-D input)", {3, 6}, {2, 3, 4}, true, 1, 0, 1, 1));
  return c;
}

namespace {
Case max_pool(const std::string& label, Shape x, P k, P s, P p, P d, int32_t ceil, bool with_indices = false) {
  return Case{label, {Input{std::move(x)}}, [k, s, p, d, ceil, with_indices](ag_tensor** out, const Args& a) {
                if (!with_indices) return ag_op_max_pool2d(out, a[0], k.data(), s.data(), p.data(), d.data(), ceil);
                ag_tensor* idx = nullptr;
                const ag_status st =
                    ag_op_max_pool2d_with_indices(out, &idx, a[0], k.data(), s.data(), p.data(), d.data(), ceil);
                ag_tensor_release(idx);
                return st;
              }};
}
}  // namespace

Cases cases_max_pool2d() {
  Cases c;
  c.push_back(max_pool("max_pool2d", {2, 2, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, 0));
  c.push_back(max_pool("max_pool2d(3x3, stride 2, padding 1)", {1, 2, 5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0));
  c.push_back(max_pool("max_pool2d(dilation 2, stride 1)", {1, 1, 6, 5}, {2, 2}, {1, 1}, {1, 0}, {2, 2}, 0));
  c.push_back(max_pool("max_pool2d(ceil_mode, 2x3)", {1, 2, 5, 7}, {2, 3}, {2, 2}, {0, 1}, {1, 1}, 1));
  c.push_back(max_pool("max_pool2d(3-D)", {2, 4, 5}, {2, 2}, {1, 2}, {0, 0}, {1, 1}, 0));
  c.push_back({"max_pool2d(transposed input)", {Input{{1, 2, 5, 4}}}, [](ag_tensor** out, const Args& a) {
                 const P k{2, 2}, s{1, 1};
                 ag_tensor* view = nullptr;
                 ag_status st = transposed(&view, a[0]);
                 if (st == AG_OK) st = ag_op_max_pool2d(out, view, k.data(), s.data(), nullptr, nullptr, 0);
                 ag_tensor_release(view);
                 return st;
               }});
  return c;
}

Cases cases_max_pool2d_with_indices() {
  Cases c;
  c.push_back(max_pool("max_pool2d_with_indices", {2, 1, 5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, true));
  return c;
}

Cases cases_avg_pool2d() {
  Cases c;
  auto avg = [](const std::string& label, Shape x, P k, P s, P p, int32_t ceil, int32_t include, int64_t div) {
    return Case{label, {Input{std::move(x)}}, [k, s, p, ceil, include, div](ag_tensor** out, const Args& a) {
                  return ag_op_avg_pool2d(out, a[0], k.data(), s.data(), p.data(), ceil, include, div);
                }};
  };
  c.push_back(avg("avg_pool2d", {2, 2, 4, 4}, {2, 2}, {2, 2}, {0, 0}, 0, 1, 0));
  c.push_back(avg("avg_pool2d(3x3, stride 2, padding 1)", {1, 2, 5, 6}, {3, 3}, {2, 2}, {1, 1}, 0, 1, 0));
  c.push_back(avg("avg_pool2d(count_include_pad 0)", {1, 2, 5, 6}, {3, 3}, {2, 2}, {1, 1}, 0, 0, 0));
  c.push_back(avg("avg_pool2d(ceil_mode, 2x3)", {1, 2, 5, 7}, {2, 3}, {2, 2}, {0, 1}, 1, 1, 0));
  c.push_back(avg("avg_pool2d(ceil_mode, count_include_pad 0)", {1, 1, 6, 6}, {3, 3}, {2, 2}, {1, 1}, 1, 0, 0));
  c.push_back(avg("avg_pool2d(divisor_override 5, 3-D)", {2, 4, 5}, {2, 2}, {1, 2}, {1, 0}, 0, 1, 5));
  c.push_back({"avg_pool2d(transposed input)", {Input{{1, 2, 5, 4}}}, [](ag_tensor** out, const Args& a) {
                 const P k{2, 3}, s{1, 2};
                 ag_tensor* view = nullptr;
                 ag_status st = transposed(&view, a[0]);
                 if (st == AG_OK) st = ag_op_avg_pool2d(out, view, k.data(), s.data(), nullptr, 1, 1, 0);
                 ag_tensor_release(view);
                 return st;
               }});
  return c;
}

Cases cases_adaptive_avg_pool2d() {
  Cases c;
  auto adaptive = [](const std::string& label, Shape x, P o) {
    return Case{label, {Input{std::move(x)}},
                [o](ag_tensor** out, const Args& a) { return ag_op_adaptive_avg_pool2d(out, a[0], o.data()); }};
  };
  c.push_back(adaptive("adaptive_avg_pool2d", {2, 2, 5, 7}, {3, 4}));
  c.push_back(adaptive("adaptive_avg_pool2d(to 1x1)", {1, 3, 4, 4}, {1, 1}));
  c.push_back(adaptive("adaptive_avg_pool2d(3-D, larger output)", {2, 3, 2}, {4, 3}));
  return c;
}

}  // namespace gradcheck

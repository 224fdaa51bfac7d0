// Gradient-check cases of the shape and view ops (family CUSTOM). Several
// cases feed an op a non-contiguous input (a transpose or a strided slice
// first), and a few send views into elementwise ops and sums, so strided
// reads are checked in forward and backward.
#include <cstdint>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;

// Runs `op` on t (a temporary made by `first` from x), releasing t.
template <class First, class Op>
ag_status chain(ag_tensor** out, First first, Op op) {
  ag_tensor* t = nullptr;
  ag_status st = first(&t);
  if (st == AG_OK) st = op(out, t);
  ag_tensor_release(t);
  return st;
}

// x transposed in its last two dims: a non-contiguous input.
ag_status tr(ag_tensor** out, const ag_tensor* x) { return ag_op_transpose(out, x, -2, -1); }

}  // namespace

Cases cases_flatten() {
  Cases c;
  for (auto [s, e] : std::vector<std::pair<int64_t, int64_t>>{{0, -1}, {1, 2}, {0, 0}, {-2, -1}}) {
    c.push_back({"flatten(" + std::to_string(s) + "," + std::to_string(e) + ")", {Input{{2, 3, 2}}},
                 [s = s, e = e](ag_tensor** out, X x) { return ag_op_flatten(out, x[0], s, e); }});
  }
  c.push_back({"flatten(0-dim)", {Input{{}}}, [](ag_tensor** out, X x) { return ag_op_flatten(out, x[0], 0, -1); }});
  // A transposed input cannot be viewed flat: the copy path.
  c.push_back({"flatten(transposed)", {Input{{3, 2}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [](ag_tensor** o, ag_tensor* t) { return ag_op_flatten(o, t, 0, -1); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_squeeze() {
  Cases c;
  const int64_t d1[1] = {1}, dm[2] = {-1, 0};
  c.push_back({"squeeze(all)", {Input{{2, 1, 3, 1}}}, [](ag_tensor** out, X x) { return ag_op_squeeze(out, x[0], nullptr, 0); }});
  c.push_back({"squeeze(1)", {Input{{2, 1, 3, 1}}}, [d1](ag_tensor** out, X x) { return ag_op_squeeze(out, x[0], d1, 1); }});
  c.push_back({"squeeze(-1,0)", {Input{{2, 1, 3, 1}}}, [dm](ag_tensor** out, X x) { return ag_op_squeeze(out, x[0], dm, 2); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_unsqueeze() {
  Cases c;
  for (int64_t d : {0, 1, 2, -1, -3}) {
    c.push_back({"unsqueeze(" + std::to_string(d) + ")", {Input{{2, 3}}},
                 [d](ag_tensor** out, X x) { return ag_op_unsqueeze(out, x[0], d); }});
  }
  c.push_back({"unsqueeze(0-dim)", {Input{{}}}, [](ag_tensor** out, X x) { return ag_op_unsqueeze(out, x[0], 0); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_transpose() {
  Cases c;
  c.push_back({"transpose(0,1)", {Input{{2, 3}}}, [](ag_tensor** out, X x) { return ag_op_transpose(out, x[0], 0, 1); }});
  c.push_back({"transpose(0,-1)", {Input{{2, 3, 4}}}, [](ag_tensor** out, X x) { return ag_op_transpose(out, x[0], 0, -1); }});
  // Transposed views into elementwise ops, sums and reshape (strided reads).
  c.push_back({"transpose+exp", {Input{{3, 4}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [](ag_tensor** o, ag_tensor* t) { return ag_op_exp(o, t); });
               }});
  c.push_back({"transpose+add", {Input{{3, 2}}, Input{{2, 3}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_add(o, t, x[1]); });
               }});
  c.push_back({"transpose+mul(broadcast)", {Input{{3, 2}}, Input{{3}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_mul(o, t, x[1]); });
               }});
  c.push_back({"transpose+sum", {Input{{3, 4, 2}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return ag_op_transpose(t, x[0], 0, 2); },
                              [](ag_tensor** o, ag_tensor* t) { return ag_op_sum(o, t); });
               }});
  const int64_t shape[2] = {2, 6};
  c.push_back({"transpose+reshape", {Input{{3, 4}}}, [shape](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_reshape(o, t, shape, 2); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_permute() {
  Cases c;
  const int64_t p1[3] = {2, 0, 1}, p2[3] = {-1, 1, 0};
  c.push_back({"permute(2,0,1)", {Input{{2, 3, 4}}}, [p1](ag_tensor** out, X x) { return ag_op_permute(out, x[0], p1, 3); }});
  c.push_back({"permute(-1,1,0)", {Input{{2, 3, 4}}}, [p2](ag_tensor** out, X x) { return ag_op_permute(out, x[0], p2, 3); }});
  c.push_back({"permute(0-dim)", {Input{{}}}, [](ag_tensor** out, X x) { return ag_op_permute(out, x[0], nullptr, 0); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_slice() {
  Cases c;
  struct S {
    int64_t dim, start, end, step;
  };
  for (S s : {S{0, 1, 4, 1}, S{1, 0, INT64_MAX, 2}, S{-1, -3, -1, 1}, S{0, -100, 100, 3}, S{1, 2, 2, 1}}) {
    c.push_back({"slice(" + std::to_string(s.dim) + "," + std::to_string(s.start) + "," + std::to_string(s.end) + "," +
                     std::to_string(s.step) + ")",
                 {Input{{5, 4}}}, [s](ag_tensor** out, X x) { return ag_op_slice(out, x[0], s.dim, s.start, s.end, s.step); }});
  }
  // Strided slices into elementwise ops and sums.
  c.push_back({"slice+mul", {Input{{6, 3}}, Input{{3, 3}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return ag_op_slice(t, x[0], 0, 0, 6, 2); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_mul(o, t, x[1]); });
               }});
  c.push_back({"slice+sum", {Input{{4, 7}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return ag_op_slice(t, x[0], 1, 1, 7, 3); },
                              [](ag_tensor** o, ag_tensor* t) { return ag_op_sum(o, t); });
               }});
  c.push_back({"slice(transposed)", {Input{{4, 5}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [](ag_tensor** o, ag_tensor* t) { return ag_op_slice(o, t, 1, 1, 4, 2); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_slice_backward() {
  Cases c;
  const int64_t s1[2] = {5, 4}, s2[3] = {2, 7, 3};
  c.push_back({"slice_backward(0,1,4,1)", {Input{{3, 4}}},
               [s1](ag_tensor** out, X x) { return ag_op_slice_backward(out, x[0], s1, 2, 0, 1, 4, 1); }});
  c.push_back({"slice_backward(1,0,max,3)", {Input{{2, 3, 3}}},
               [s2](ag_tensor** out, X x) { return ag_op_slice_backward(out, x[0], s2, 3, 1, 0, INT64_MAX, 3); }});
  c.push_back({"slice_backward(transposed)", {Input{{4, 3}}}, [s1](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_slice_backward(o, t, s1, 2, 0, -3, INT64_MAX, 1); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_select() {
  Cases c;
  for (auto [d, i] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, -1}, {-1, 0}}) {
    c.push_back({"select(" + std::to_string(d) + "," + std::to_string(i) + ")", {Input{{3, 4}}},
                 [d = d, i = i](ag_tensor** out, X x) { return ag_op_select(out, x[0], d, i); }});
  }
  c.push_back({"select(1-D)", {Input{{5}}}, [](ag_tensor** out, X x) { return ag_op_select(out, x[0], 0, 2); }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_narrow() {
  Cases c;
  c.push_back({"narrow(0,1,2)", {Input{{4, 3}}}, [](ag_tensor** out, X x) { return ag_op_narrow(out, x[0], 0, 1, 2); }});
  c.push_back({"narrow(-1,-2,2)", {Input{{4, 3}}}, [](ag_tensor** out, X x) { return ag_op_narrow(out, x[0], -1, -2, 2); }});
  c.push_back(squared(c.back()));
  return c;
}

// Multi-output ops: the case returns one output (each in turn), so every
// piece's gradient path is checked; x's gradient gets zeros elsewhere.
Cases cases_split() {
  Cases c;
  const int64_t sizes[3] = {1, 3, 2};
  for (int k = 0; k < 3; ++k) {
    c.push_back({"split(out " + std::to_string(k) + ")", {Input{{2, 6}}}, [sizes, k](ag_tensor** out, X x) {
                   ag_tensor* outs[3] = {nullptr, nullptr, nullptr};
                   const ag_status st = ag_op_split(outs, 3, x[0], sizes, 3, 1);
                   if (st != AG_OK) return st;
                   *out = outs[k];
                   for (int j = 0; j < 3; ++j) {
                     if (j != k) ag_tensor_release(outs[j]);
                   }
                   return AG_OK;
                 }});
  }
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_chunk() {
  Cases c;
  for (int k = 0; k < 3; ++k) {
    c.push_back({"chunk(out " + std::to_string(k) + ")", {Input{{5, 2}}}, [k](ag_tensor** out, X x) {
                   ag_tensor* outs[3] = {nullptr, nullptr, nullptr};
                   int32_t n = 0;
                   const ag_status st = ag_op_chunk(outs, 3, &n, x[0], 3, 0);
                   if (st != AG_OK) return st;
                   *out = outs[k];
                   for (int j = 0; j < n; ++j) {
                     if (j != k) ag_tensor_release(outs[j]);
                   }
                   return AG_OK;
                 }});
  }
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_concat() {
  Cases c;
  c.push_back({"concat(0)", {Input{{2, 3}}, Input{{1, 3}}, Input{{3, 3}}}, [](ag_tensor** out, X x) {
                 const ag_tensor* xs[3] = {x[0], x[1], x[2]};
                 return ag_op_concat(out, xs, 3, 0);
               }});
  c.push_back({"concat(-1,empty)", {Input{{2, 2}}, Input{{2, 0}}, Input{{2, 3}}}, [](ag_tensor** out, X x) {
                 const ag_tensor* xs[3] = {x[0], x[1], x[2]};
                 return ag_op_concat(out, xs, 3, -1);
               }});
  c.push_back({"concat(same input twice)", {Input{{2, 2}}}, [](ag_tensor** out, X x) {
                 const ag_tensor* xs[2] = {x[0], x[0]};
                 return ag_op_concat(out, xs, 2, 1);
               }});
  c.push_back({"concat(transposed)", {Input{{3, 2}}, Input{{2, 2}}}, [](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); }, [&](ag_tensor** o, ag_tensor* t) {
                   const ag_tensor* xs[2] = {t, x[1]};
                   return ag_op_concat(o, xs, 2, 1);
                 });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_stack() {
  Cases c;
  for (int64_t d : {0, 1, -1}) {
    c.push_back({"stack(" + std::to_string(d) + ")", {Input{{2, 3}}, Input{{2, 3}}}, [d](ag_tensor** out, X x) {
                   const ag_tensor* xs[2] = {x[0], x[1]};
                   return ag_op_stack(out, xs, 2, d);
                 }});
  }
  c.push_back({"stack(0-dim)", {Input{{}}, Input{{}}, Input{{}}}, [](ag_tensor** out, X x) {
                 const ag_tensor* xs[3] = {x[0], x[1], x[2]};
                 return ag_op_stack(out, xs, 3, 0);
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_flip() {
  Cases c;
  const int64_t d0[1] = {0}, d01[2] = {-1, 0};
  c.push_back({"flip(0)", {Input{{3, 2}}}, [d0](ag_tensor** out, X x) { return ag_op_flip(out, x[0], d0, 1); }});
  c.push_back({"flip(-1,0)", {Input{{2, 3, 4}}}, [d01](ag_tensor** out, X x) { return ag_op_flip(out, x[0], d01, 2); }});
  c.push_back({"flip(transposed)", {Input{{3, 4}}}, [d01](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_flip(o, t, d01, 2); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_repeat() {
  Cases c;
  const int64_t r1[2] = {2, 3}, r2[3] = {2, 1, 2}, r3[2] = {1, 1};
  c.push_back({"repeat(2,3)", {Input{{2, 2}}}, [r1](ag_tensor** out, X x) { return ag_op_repeat(out, x[0], r1, 2); }});
  c.push_back({"repeat(2,1,2 on 2-D)", {Input{{1, 3}}}, [r2](ag_tensor** out, X x) { return ag_op_repeat(out, x[0], r2, 3); }});
  c.push_back({"repeat(1,1)", {Input{{2, 3}}}, [r3](ag_tensor** out, X x) { return ag_op_repeat(out, x[0], r3, 2); }});
  c.push_back({"repeat(transposed)", {Input{{3, 2}}}, [r1](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_repeat(o, t, r1, 2); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

Cases cases_pad() {
  Cases c;
  struct P {
    const char* label;
    std::vector<int64_t> pads;
    int32_t mode;
    Shape shape;
  };
  const std::vector<P> ps = {
      {"pad(constant 1,2)", {1, 2}, AG_PAD_CONSTANT, {2, 3}},
      {"pad(constant 0,1,2,0)", {0, 1, 2, 0}, AG_PAD_CONSTANT, {2, 3}},
      {"pad(constant crop -1,2)", {-1, 2, 1, -1}, AG_PAD_CONSTANT, {3, 4}},
      {"pad(reflect 2,1)", {2, 1}, AG_PAD_REFLECT, {2, 4}},
      {"pad(reflect 1,2,2,1)", {1, 2, 2, 1}, AG_PAD_REFLECT, {2, 3, 4}},
  };
  for (const P& p : ps) {
    c.push_back({p.label, {Input{p.shape}}, [p](ag_tensor** out, X x) {
                   return ag_op_pad(out, x[0], p.pads.data(), static_cast<int32_t>(p.pads.size()), p.mode, 0.5);
                 }});
  }
  const int64_t pr[2] = {1, 2};
  c.push_back({"pad(reflect transposed)", {Input{{4, 3}}}, [pr](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return tr(t, x[0]); },
                              [&](ag_tensor** o, ag_tensor* t) { return ag_op_pad(o, t, pr, 2, AG_PAD_REFLECT, 0.0); });
               }});
  // Second order through reflect padding: the padded values squared.
  c.push_back({"pad(reflect then square)", {Input{{2, 4}}}, [pr](ag_tensor** out, X x) {
                 return chain(out, [&](ag_tensor** t) { return ag_op_pad(t, x[0], pr, 2, AG_PAD_REFLECT, 0.0); },
                              [](ag_tensor** o, ag_tensor* t) { return ag_op_mul(o, t, t); });
               }});
  c.push_back(squared(c.back()));
  return c;
}

}  // namespace gradcheck

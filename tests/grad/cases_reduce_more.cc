// Gradient-check cases of the reductions, scans, sorts and distances added
// in 0.2 (ops_reduce.h) whose signatures the generic checks do not cover.
// Inputs are random, so no ties: the selected elements are unique.
#include <cmath>

#include "gradcheck.h"

namespace gradcheck {

namespace {

using X = const std::vector<ag_tensor*>&;
using StatMean = ag_status (*)(ag_tensor**, ag_tensor**, const ag_tensor*, const int64_t*, int32_t, int32_t, double);
using ScanIndices = ag_status (*)(ag_tensor**, ag_tensor**, const ag_tensor*, int64_t);
using SelectOp = ag_status (*)(ag_tensor**, ag_tensor**, const ag_tensor*, int64_t, int32_t);
using QuantileOp = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, const int64_t*, int32_t, int32_t,
                                 int32_t);
using PairDist = ag_status (*)(ag_tensor**, const ag_tensor*, const ag_tensor*, double);

// Each of the two results, the other not asked for.
Cases stat_mean_cases(const std::string& name, StatMean fn) {
  const std::vector<std::pair<Shape, Shape>> rows = {{{2, 3}, {1}}, {{2, 3, 4}, {0, 2}}, {{5}, {}}};
  Cases c;
  for (const auto& [s, dims] : rows) {
    for (int which : {0, 1}) {
      c.push_back({name + (which ? "(mean)" : "(stat)"), {Input{s}}, [fn, dims = dims, which](ag_tensor** out, X x) {
                     return fn(which ? nullptr : out, which ? out : nullptr, x[0], dims.data(),
                               static_cast<int32_t>(dims.size()), 0, 1.0);
                   }});
    }
  }
  return c;
}

Cases scan_cases(const std::string& name, ScanIndices fn) {
  const std::vector<std::pair<Shape, int64_t>> rows = {{{6}, 0}, {{3, 4}, 1}, {{3, 4}, 0}, {{2, 3, 4}, -2}, {{}, 0}};
  Cases c;
  for (const auto& [s, dim] : rows) {
    c.push_back({name + "(dim=" + std::to_string(dim) + ")", {Input{s}},
                 [fn, dim = dim](ag_tensor** out, X x) { return fn(out, nullptr, x[0], dim); }});
  }
  c.push_back(squared(c[1]));
  return c;
}

Cases select_cases(const std::string& name, SelectOp fn) {
  const std::vector<std::pair<Shape, int64_t>> rows = {{{5}, 0}, {{2, 3}, 1}, {{4, 3}, 0}, {{2, 3, 4}, -1}, {{}, 0}};
  Cases c;
  for (const auto& [s, dim] : rows) {
    for (int32_t keep : {0, 1}) {
      c.push_back({name + "(dim=" + std::to_string(dim) + ", keepdim=" + std::to_string(keep) + ")", {Input{s}},
                   [fn, dim = dim, keep](ag_tensor** out, X x) { return fn(out, nullptr, x[0], dim, keep); }});
    }
  }
  c.push_back(squared(c[2]));
  return c;
}

Cases quantile_cases(const std::string& name, QuantileOp fn) {
  struct Row {
    Shape shape;
    std::vector<int64_t> q_shape;
    std::vector<double> q;
    Shape dims;
    int32_t keepdim, interpolation;
  };
  const std::vector<Row> rows = {{{5}, {}, {0.3}, {}, 0, 0},          {{3, 4}, {2}, {0.25, 0.9}, {1}, 0, 0},
                                 {{3, 4}, {}, {0.5}, {0}, 1, 3},       {{2, 3, 4}, {3}, {0.0, 0.4, 1.0}, {}, 1, 0},
                                 {{4, 5}, {2}, {0.2, 0.7}, {-1}, 0, 1}, {{4, 5}, {2}, {0.2, 0.7}, {-1}, 0, 2},
                                 {{4, 5}, {2}, {0.3, 0.6}, {0}, 0, 4}};
  Cases c;
  for (const Row& r : rows) {
    c.push_back({name + "(interpolation=" + std::to_string(r.interpolation) + ")", {Input{r.shape}},
                 [fn, r](ag_tensor** out, X x) {
                   return with_constant(out, x[0], r.q_shape, r.q, [&](ag_tensor** o, const ag_tensor* q) {
                     return fn(o, x[0], q, r.dims.data(), static_cast<int32_t>(r.dims.size()), r.keepdim,
                               r.interpolation);
                   });
                 }});
  }
  c.push_back(squared(c[1]));
  return c;
}

Cases pair_dist_cases(const std::string& name, PairDist fn, const std::vector<std::pair<Shape, Shape>>& shapes,
                      const std::vector<double>& ps) {
  Cases c;
  for (double p : ps) {
    for (const auto& [a, b] : shapes) {
      c.push_back({name + "(p=" + std::to_string(p) + ")", {Input{a}, Input{b}},
                   [fn, p](ag_tensor** out, X x) { return fn(out, x[0], x[1], p); }});
    }
  }
  return c;
}

}  // namespace

Cases cases_var_mean() { return stat_mean_cases("var_mean", &ag_op_var_mean); }
Cases cases_std_mean() { return stat_mean_cases("std_mean", &ag_op_std_mean); }
Cases cases_cummax() { return scan_cases("cummax", &ag_op_cummax); }
Cases cases_cummin() { return scan_cases("cummin", &ag_op_cummin); }
Cases cases_median_dim() { return select_cases("median_dim", &ag_op_median_dim); }
Cases cases_nanmedian_dim() { return select_cases("nanmedian_dim", &ag_op_nanmedian_dim); }
Cases cases_quantile() { return quantile_cases("quantile", &ag_op_quantile); }
Cases cases_nanquantile() { return quantile_cases("nanquantile", &ag_op_nanquantile); }

Cases cases_dist() {
  return pair_dist_cases("dist", &ag_op_dist, {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{4}, {}}}, {2.0, 1.0, 3.0, INFINITY});
}

Cases cases_cdist() {
  Cases c = pair_dist_cases("cdist", &ag_op_cdist, {{{3, 2}, {4, 2}}, {{2, 3, 2}, {1, 4, 2}}}, {2.0, 1.0, 3.0});
  // More than 25 rows: the matrix product form.
  c.push_back({"cdist(p=2, 27 rows)", {Input{{27, 2}}, Input{{3, 2}}},
               [](ag_tensor** out, X x) { return ag_op_cdist(out, x[0], x[1], 2.0); }});
  return c;
}

Cases cases_pdist() {
  Cases c;
  for (double p : {2.0, 1.0, 3.0}) {
    c.push_back({"pdist(p=" + std::to_string(p) + ")", {Input{{4, 3}}},
                 [p](ag_tensor** out, X x) { return ag_op_pdist(out, x[0], p); }});
  }
  return c;
}

Cases cases_pairwise_distance() {
  Cases c;
  for (int32_t keep : {0, 1}) {
    c.push_back({"pairwise_distance(keepdim=" + std::to_string(keep) + ")", {Input{{3, 4}}, Input{{3, 4}}},
                 [keep](ag_tensor** out, X x) { return ag_op_pairwise_distance(out, x[0], x[1], 2.0, 1e-6, keep); }});
  }
  c.push_back({"pairwise_distance(p=1, broadcast)", {Input{{3, 4}}, Input{{4}}},
               [](ag_tensor** out, X x) { return ag_op_pairwise_distance(out, x[0], x[1], 1.0, 1e-6, 0); }});
  return c;
}

Cases cases_cosine_similarity() {
  Cases c;
  c.push_back({"cosine_similarity(dim=1)", {Input{{3, 4}}, Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_cosine_similarity(out, x[0], x[1], 1, 1e-8); }});
  c.push_back({"cosine_similarity(dim=-1, broadcast)", {Input{{2, 3}}, Input{{3}}},
               [](ag_tensor** out, X x) { return ag_op_cosine_similarity(out, x[0], x[1], -1, 1e-8); }});
  c.push_back({"cosine_similarity(dim=0)", {Input{{4, 2}}, Input{{4, 2}}},
               [](ag_tensor** out, X x) { return ag_op_cosine_similarity(out, x[0], x[1], 0, 1e-8); }});
  return c;
}

Cases cases_normalize() {
  Cases c;
  const std::vector<std::pair<double, int64_t>> rows = {{2.0, 1}, {1.0, 0}, {3.0, -1}};
  for (const auto& [p, dim] : rows) {
    c.push_back({"normalize(p=" + std::to_string(p) + ")", {Input{{3, 4}}},
                 [p = p, dim = dim](ag_tensor** out, X x) { return ag_op_normalize(out, x[0], p, dim, 1e-12); }});
  }
  return c;
}

Cases cases_sort() {
  Cases c;
  const std::vector<std::pair<Shape, int64_t>> rows = {{{5}, 0}, {{2, 3}, 1}, {{3, 2}, 0}, {{2, 3, 4}, -1}, {{}, 0}};
  for (const auto& [s, dim] : rows) {
    for (int32_t desc : {0, 1}) {
      c.push_back({"sort(descending=" + std::to_string(desc) + ")", {Input{s}},
                   [dim = dim, desc](ag_tensor** out, X x) { return ag_op_sort(out, nullptr, x[0], dim, desc, 1); }});
    }
  }
  c.push_back(squared(c[2]));
  return c;
}

Cases cases_topk() {
  Cases c;
  c.push_back({"topk(k=3)", {Input{{5}}}, [](ag_tensor** out, X x) { return ag_op_topk(out, nullptr, x[0], 3, 0, 1, 1); }});
  c.push_back({"topk(k=2, dim=1, smallest)", {Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_topk(out, nullptr, x[0], 2, 1, 0, 1); }});
  c.push_back({"topk(k=1, dim=0)", {Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_topk(out, nullptr, x[0], 1, 0, 1, 0); }});
  c.push_back(squared(c[1]));
  return c;
}

Cases cases_kthvalue() {
  Cases c;
  c.push_back({"kthvalue(k=2)", {Input{{5}}},
               [](ag_tensor** out, X x) { return ag_op_kthvalue(out, nullptr, x[0], 2, 0, 0); }});
  c.push_back({"kthvalue(k=3, dim=1, keepdim)", {Input{{3, 4}}},
               [](ag_tensor** out, X x) { return ag_op_kthvalue(out, nullptr, x[0], 3, 1, 1); }});
  c.push_back(squared(c[1]));
  return c;
}

}  // namespace gradcheck

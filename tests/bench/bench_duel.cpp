// tests/bench/bench_duel.cpp - workloads a, b, e and d of WORKLOADS.md on ag and
// on libtorch in one process, one repeat of each in turn (the order swapped
// every round), at 1 thread. A shared machine changes speed from one minute
// to the next; separate processes (run.sh) then see different machines, and
// their ratio swings with it. Here every round's ratio comes from two repeats
// a few milliseconds apart, so the median ratio is the figure to compare with
// a target. ag's side is the bench_ag code (bench_harness.c, bench_mlp.c);
// libtorch's is libtorch_workloads.h, as bench_libtorch.cpp's. d's update is
// one pass on both sides (add_scaled_, sub_ with alpha).
//
//   OPENBLAS_CORETYPE=Cooperlake bench_duel [--only a,b,e,d] [--rounds R (21)] [--block B (5)]
//       [--out FILE.jsonl]
// (libtorch's products run on OpenBLAS here, which falls back to slow
// kernels on AVX-512 cores it does not know: run.sh sets the core type as
// it does for bench_libtorch.)
//
// Prints one JSON line per workload (to --out instead, appended, if given)
// and a table:
// medians of each side's fwd, bwd (and free, total) and the median, p25 and
// p75 of the per-round ratios ag / libtorch. Exits 1 when the two sides'
// results differ (relative 1e-3: the output and the gradient of x; d's
// loss, after the same number of steps on each side).
#include <torch/torch.h>

#include "libtorch_workloads.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "bench_harness.h"
}

namespace {

using workloads::kBranches;
using workloads::kChainOps;

// One repeat: its times, the output's value and the sum of x's gradient.
struct Times {
  double fwd = 0, bwd = 0, fre = 0;
  double value = 0, xgrad = 0;
  double total() const { return fwd + bwd + fre; }
};

// One side of a workload: each call times one repeat.
using Side = std::function<Times()>;

// ------------------------------------------------------------------ ag

// One timed repeat: build() records the graph and returns its output; then
// its backward, and the release of the graph.
Times ag_repeat(ag_tensor* x, const std::function<ag_tensor*()>& build) {
  Times t;
  const int64_t t0 = now_ns();
  ag_tensor* y = build();
  const int64_t t1 = now_ns();
  CK(ag_backward(y, nullptr, nullptr));
  const int64_t t2 = now_ns();
  t.value = item(y);
  const int64_t t3 = now_ns();
  ag_tensor_release(y);
  const int64_t t4 = now_ns();
  t.fwd = double(t1 - t0), t.bwd = double(t2 - t1), t.fre = double(t4 - t3);
  t.xgrad = grad_sum(x);
  return t;
}

Side ag_chain(ag_context* ctx, bool scalar) {
  ag_tensor *x, *a, *b;
  if (scalar) {
    CK(ag_tensor_scalar(&x, ctx, AG_F32, 0.5));
    CK(ag_tensor_scalar(&a, ctx, AG_F32, 0.9999));
    CK(ag_tensor_scalar(&b, ctx, AG_F32, 0.0001));
  } else {
    const int64_t shape[1] = {16};
    x = det_tensor(ctx, 16, 1, 0.25, 0.75);
    CK(ag_tensor_full(&a, ctx, AG_F32, shape, 1, 0.9999));
    CK(ag_tensor_full(&b, ctx, AG_F32, shape, 1, 0.0001));
  }
  CK(ag_tensor_requires_grad(x, 1));
  // The tensors live as long as the process.
  return [x, a, b, scalar]() {
    CK(ag_tensor_set_grad(x, nullptr));
    return ag_repeat(x, [&] {
      ag_tensor* y = workload_chain(x, a, b, kChainOps);
      return scalar ? y : sum_and_release(y);
    });
  };
}

Side ag_fanin(ag_context* ctx) {
  ag_tensor* x = det_tensor(ctx, 64, 31, -1.0, 1.0);
  CK(ag_tensor_requires_grad(x, 1));
  std::vector<ag_tensor*> w;
  for (int i = 0; i < kBranches; ++i) {
    w.push_back(det_tensor(ctx, 64, uint32_t(1000 + i), -1.0, 1.0));
    CK(ag_tensor_requires_grad(w.back(), 1));
  }
  return [x, w]() {
    CK(ag_tensor_set_grad(x, nullptr));
    for (ag_tensor* t : w) CK(ag_tensor_set_grad(t, nullptr));
    return ag_repeat(x, [&] { return workload_fanin(x, w.data(), kBranches); });
  };
}

// d: one training step of bench_mlp.c's model (layout 0 matmul, 1 linear);
// fre holds the update's time; the value is the step's loss.
Side ag_mlp(ag_context* ctx, int layout) {
  mlp_model* m = mlp_model_new(ctx, layout);
  return [m]() {
    int64_t ns[4];
    ag_tensor* loss = mlp_model_step(m, ns);
    Times t;
    t.fwd = double(ns[0]), t.bwd = double(ns[1]), t.fre = double(ns[2]);
    t.value = item(loss);
    ag_tensor_release(loss);
    return t;
  };
}

// ------------------------------------------------------------------ libtorch

torch::Tensor det_torch(int64_t count, uint32_t seed, double lo, double hi) {
  std::vector<float> v(static_cast<size_t>(count));
  det_uniform(v.data(), count, seed, lo, hi);
  return torch::from_blob(v.data(), {count}, torch::kFloat32).clone();
}

// ag_repeat's twin.
Times torch_repeat(const torch::Tensor& x, const std::function<torch::Tensor()>& build) {
  Times t;
  const int64_t t0 = now_ns();
  torch::Tensor y = build();
  const int64_t t1 = now_ns();
  y.backward();
  const int64_t t2 = now_ns();
  t.value = y.item<double>();
  const int64_t t3 = now_ns();
  y = torch::Tensor();  // the last handle on the graph
  const int64_t t4 = now_ns();
  t.fwd = double(t1 - t0), t.bwd = double(t2 - t1), t.fre = double(t4 - t3);
  t.xgrad = x.grad().to(torch::kFloat64).sum().item<double>();
  return t;
}

Side torch_chain(bool scalar) {
  const std::vector<int64_t> shape = scalar ? std::vector<int64_t>{} : std::vector<int64_t>{16};
  torch::Tensor x = scalar ? torch::full({}, 0.5f) : det_torch(16, 1, 0.25, 0.75);
  const torch::Tensor a = torch::full(shape, 0.9999f), b = torch::full(shape, 0.0001f);
  x.requires_grad_(true);
  return [x, a, b, scalar]() mutable {
    x.mutable_grad() = torch::Tensor();
    return torch_repeat(x, [&] {
      torch::Tensor y = workloads::chain(x, a, b);
      return scalar ? y : y.sum();
    });
  };
}

Side torch_fanin() {
  torch::Tensor x = det_torch(64, 31, -1.0, 1.0).requires_grad_(true);
  std::vector<torch::Tensor> w;
  for (int i = 0; i < kBranches; ++i) w.push_back(det_torch(64, uint32_t(1000 + i), -1.0, 1.0).requires_grad_(true));
  return [x, w]() mutable {
    x.mutable_grad() = torch::Tensor();
    for (torch::Tensor& t : w) t.mutable_grad() = torch::Tensor();
    return torch_repeat(x, [&] { return workloads::fanin_loss(x, w); });
  };
}

// WORKLOADS.md's d on libtorch, as bench_libtorch.cpp runs it.
Side torch_mlp(bool linear) {
  workloads::Mlp m = workloads::mlp_model(det_torch, linear);
  return [m]() mutable {
    Times t;
    const int64_t t0 = now_ns();
    torch::Tensor loss = workloads::mlp_loss(m);
    const int64_t t1 = now_ns();
    loss.backward();
    const int64_t t2 = now_ns();
    workloads::mlp_update(m, 0.01);
    const int64_t t3 = now_ns();
    t.fwd = double(t1 - t0), t.bwd = double(t2 - t1), t.fre = double(t3 - t2);
    t.value = loss.item<double>();
    return t;
  };
}

// ------------------------------------------------------------------ the duel

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-3 * std::max(std::fabs(a), std::fabs(b)); }

struct Row {
  std::string metric;
  double ag, lt, r50, r25, r75;
};

// The median repeat of a block: one repeat that warms the caches (the other
// side ran last), then `block` timed ones; each metric's median separately.
Times block_of(Side& side, int block) {
  side();
  std::vector<Times> ts;
  for (int i = 0; i < block; ++i) ts.push_back(side());
  Times m = ts.back();
  auto mid = [&](double Times::*f) {
    std::vector<double> v;
    for (const Times& t : ts) v.push_back(t.*f);
    return quantile(v, 0.5);
  };
  m.fwd = mid(&Times::fwd), m.bwd = mid(&Times::bwd), m.fre = mid(&Times::fre);
  return m;
}

// Runs `rounds` rounds of a block of each side (the order swapped every
// round) after one of warm-up; returns false when the results differ.
// `third` names what Times::fre holds ("free", or d's "update"), `all` the sum.
bool duel(const char* name, const char* unit, double per, Side& ag, Side& lt, int rounds, int block, FILE* out,
          std::vector<std::pair<std::string, Row>>& table, const char* third = "free", const char* all = "total") {
  block_of(ag, block), block_of(lt, block);
  std::vector<Times> ta, tl;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      ta.push_back(block_of(ag, block));
      tl.push_back(block_of(lt, block));
    } else {
      tl.push_back(block_of(lt, block));
      ta.push_back(block_of(ag, block));
    }
  }
  const Times &ca = ta.back(), &cl = tl.back();
  const bool same = close(ca.value, cl.value) && close(ca.xgrad, cl.xgrad);
  std::string json = std::string("{\"bench\": \"duel\", \"workload\": \"") + name + "\", \"rounds\": " +
                     std::to_string(rounds) + ", \"block\": " + std::to_string(block) + ", \"unit\": \"" + unit + "\"";
  const char* metrics[] = {"fwd", "bwd", third, all};
  for (int m = 0; m < 4; ++m) {
    auto pick = [m](const Times& t) { return m == 0 ? t.fwd : m == 1 ? t.bwd : m == 2 ? t.fre : t.total(); };
    std::vector<double> va, vl, ratio;
    for (size_t i = 0; i < ta.size(); ++i) {
      va.push_back(pick(ta[i]) / per);
      vl.push_back(pick(tl[i]) / per);
      ratio.push_back(pick(ta[i]) / pick(tl[i]));
    }
    Row row{metrics[m], quantile(va, 0.5), quantile(vl, 0.5), quantile(ratio, 0.5), quantile(ratio, 0.25),
            quantile(ratio, 0.75)};
    table.push_back({name, row});
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  ", \"%s\": {\"ag\": %.6g, \"libtorch\": %.6g, \"ratio\": %.4g, \"ratio_p25\": %.4g, "
                  "\"ratio_p75\": %.4g}",
                  metrics[m], row.ag, row.lt, row.r50, row.r25, row.r75);
    json += buf;
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, ", \"check\": {\"ag\": [%.8g, %.8g], \"libtorch\": [%.8g, %.8g], \"same\": %s}}",
                ca.value, ca.xgrad, cl.value, cl.xgrad, same ? "true" : "false");
  json += buf;
  std::fprintf(out ? out : stdout, "%s\n", json.c_str());
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = "a,b,e,d";
  int rounds = 21, block = 5;
  FILE* out = nullptr;
  for (int i = 1; i < argc; ++i) {
    const bool has = i + 1 < argc;
    if (!std::strcmp(argv[i], "--only") && has) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--rounds") && has) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--block") && has) {
      block = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--out") && has) {
      out = std::fopen(argv[++i], "a");
    } else {
      std::fprintf(stderr, "usage: bench_duel [--only a,b,e,d] [--rounds R] [--block B] [--out FILE.jsonl]\n");
      return 2;
    }
  }
  torch::set_num_threads(1);
  ag_context_options o;
  CK(ag_context_options_init(&o));
  o.num_threads = 1;
  ag_context* ctx;
  CK(ag_context_create(&ctx, &o));
  const auto wants = [&](const char* w) { return ("," + only + ",").find(std::string(",") + w + ",") != std::string::npos; };
  std::vector<std::pair<std::string, Row>> table;
  bool ok = true;
  if (wants("a")) {
    Side ag = ag_chain(ctx, true), lt = torch_chain(true);
    ok &= duel("a_scalar_chain", "ns/op", kChainOps, ag, lt, rounds, block, out, table);
  }
  if (wants("b")) {
    Side ag = ag_chain(ctx, false), lt = torch_chain(false);
    ok &= duel("b_small_chain16", "ns/op", kChainOps, ag, lt, rounds, block, out, table);
  }
  if (wants("e")) {
    Side ag = ag_fanin(ctx), lt = torch_fanin();
    ok &= duel("e_fanin", "ms", 1e6, ag, lt, rounds, block, out, table);
  }
  for (int layout = 0; layout < 2 && wants("d"); ++layout) {
    Side ag = ag_mlp(ctx, layout), lt = torch_mlp(layout == 1);
    ok &= duel(layout ? "d_mlp_step linear" : "d_mlp_step matmul", "ms", 1e6, ag, lt, rounds, block, out, table,
               "update", "step");
  }
  std::printf("\n## Same process, in turn by blocks of %d repeats (after one untimed), 1 thread, %d rounds\n\n", block,
              rounds);
  std::printf("| workload | metric | unit | ag | libtorch | ag/libtorch (median of the rounds) | p25 | p75 |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto& [w, r] : table) {
    const char* unit = w.compare(0, 1, "a") == 0 || w.compare(0, 1, "b") == 0 ? "ns/op" : "ms";
    std::printf("| %s | %s | %s | %.4g | %.4g | %.4f | %.4f | %.4f |\n", w.c_str(), r.metric.c_str(), unit, r.ag,
                r.lt, r.r50, r.r25, r.r75);
  }
  if (!ok) std::fprintf(stderr, "bench_duel: ag and libtorch computed different results (see \"check\")\n");
  if (out) std::fclose(out);
  return ok ? 0 : 1;
}

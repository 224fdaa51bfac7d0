// A backward starts by running the chain of nodes from its root without
// walking the graph (engine.cc, run_chain) and walks the rest from where the
// chain ends. These cases end the chain in each of its ways and check that
// the pass does what the walked pass does: gradients against their closed
// forms, hooks, saved tensors released, and which failures say that the
// backward was interrupted.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "autograd/grad_mode.h"
#include "autograd/hooks.h"
#include "autograd/node.h"
#include "core/context.h"
#include "core/error.h"
#include "engine/engine.h"
#include "ops/ops.h"

namespace ag {
namespace {

struct Chain : ::testing::Test {
  Ref<Context> ctx = make_ref<Context>(1);
  Tensor leaf(double v) {
    Tensor t = ops::full(ctx.get(), DType::F64, Dims{1}, v);
    ensure_meta(*t).requires_grad = true;
    return t;
  }
  Tensor constant(double v) { return ops::full(ctx.get(), DType::F64, Dims{1}, v); }
  void backward(const Tensor& root, bool retain_graph = false) {
    BackwardOptions o;
    o.retain_graph = retain_graph;
    run_backward(root, ops::full(ctx.get(), DType::F64, root->shape(), 1.0), o);
  }
  static double grad(const Tensor& x) {
    const Tensor& g = meta_of(*x)->grad;
    return g ? g->data_as<double>()[0] : NAN;
  }
  static bool has_grad(const Tensor& x) { return static_cast<bool>(meta_of(*x)->grad); }
};

// y = tanh(exp(x) * c) + 0.5 as a chain of ops whose outputs the caller drops.
Tensor chain_of(Chain& t, const Tensor& x, double c) {
  Tensor y = ops::exp(x);
  y = ops::mul(y, t.constant(c));
  y = ops::tanh(y);
  return ops::add(y, t.constant(0.5));
}
double chain_derivative(double x, double c) {
  const double th = std::tanh(std::exp(x) * c);
  return (1 - th * th) * c * std::exp(x);
}

TEST_F(Chain, WholeGraphIsAChain) {
  Tensor x = leaf(0.3);
  backward(ops::sum(chain_of(*this, x, 0.7)));
  EXPECT_NEAR(grad(x), chain_derivative(0.3, 0.7), 1e-14);
}

TEST_F(Chain, EndsAtANodeWithTwoEdges) {
  // d/dx [chain(x) * sin(x)]: the mul's node leads to both factors.
  Tensor x = leaf(0.4);
  Tensor y = ops::mul(chain_of(*this, x, 0.9), ops::sin(x));
  backward(ops::sum(ops::exp(y)));
  const double f = std::tanh(std::exp(0.4) * 0.9) + 0.5, s = std::sin(0.4);
  EXPECT_NEAR(grad(x), std::exp(f * s) * (chain_derivative(0.4, 0.9) * s + f * std::cos(0.4)), 1e-13);
}

TEST_F(Chain, EndsAtANodeOtherEdgesAlsoReach) {
  // exp(x)'s node gets gradients from the chain and from the add: the
  // chain from the root must stop before it.
  Tensor x = leaf(0.2);
  Tensor e = ops::exp(x);
  Tensor y = ops::add(ops::tanh(ops::neg(e)), e);
  e.reset();
  backward(ops::sum(ops::tanh(y)));
  const double ex = std::exp(0.2), t = std::tanh(-ex), yv = t + ex, ty = std::tanh(yv);
  EXPECT_NEAR(grad(x), (1 - ty * ty) * ((1 - t * t) * -ex + ex), 1e-14);
}

TEST_F(Chain, KeptIntermediateAndRetainedGraph) {
  // A tensor the caller keeps holds its node; so do the saved tensors of a
  // retained graph. Both passes sum into x.grad.
  Tensor x = leaf(-0.6);
  Tensor mid = ops::tanh(ops::exp(x));
  Tensor loss = ops::sum(ops::mul(mid, constant(3.0)));
  backward(loss, true);
  backward(loss, false);
  const double th = std::tanh(std::exp(-0.6));
  EXPECT_NEAR(grad(x), 2 * 3.0 * (1 - th * th) * std::exp(-0.6), 1e-14);
}

TEST_F(Chain, RootIsALeafOrItsOwnChain) {
  Tensor x = leaf(1.25);
  backward(x);
  EXPECT_EQ(grad(x), 1.0);
  Tensor y = leaf(2.0);
  backward(ops::sum(ops::neg(y)));
  EXPECT_EQ(grad(y), -1.0);
}

TEST_F(Chain, OutputsOfOneNode) {
  // Two outputs of one split: the node is held by both tensors.
  Tensor x = ops::full(ctx.get(), DType::F64, Dims{2}, 0.5);
  ensure_meta(*x).requires_grad = true;
  std::vector<Tensor> parts = ops::split(ops::exp(x), {1, 1}, 0);
  Tensor loss = ops::sum(ops::tanh(parts[0]));
  backward(loss);
  const Tensor& g = meta_of(*x)->grad;
  const double th = std::tanh(std::exp(0.5));
  EXPECT_NEAR(g->data_as<double>()[0], (1 - th * th) * std::exp(0.5), 1e-14);
  EXPECT_EQ(g->data_as<double>()[1], 0.0);
}

// A node that sends no gradient on (as a custom function may): the nodes
// after it get none and still free what they saved.
struct SendsNothing final : Node {
  const char* name() const override { return "SendsNothing"; }
  void apply(TensorList&, TensorList& out) override { out[0] = Tensor(); }
};

// A node that fails when it runs.
struct Fails final : Node {
  const char* name() const override { return "Fails"; }
  void apply(TensorList&, TensorList&) override { fail(AG_ERR_INVALID_ARGUMENT, "refused"); }
};

template <class N>
Tensor through(const Tensor& x) {
  Tensor y = ops::full(x->context(), x->dtype(), x->shape(), 0.0);
  auto n = make_ref<N>();
  collect_next_edges(*n, {x.get()});
  set_history(std::move(n), *y);
  return y;
}

TEST_F(Chain, NoGradientOnStillReleasesSavedTensors) {
  Tensor x = leaf(0.1);
  Tensor e = ops::exp(x);
  Ref<Node> exp_node = Ref<Node>::share(grad_fn_of(*e));
  EXPECT_GT(exp_node->saved_bytes(), 0u);
  Tensor loss = ops::sum(ops::tanh(through<SendsNothing>(e)));
  e.reset();
  backward(loss);
  EXPECT_FALSE(has_grad(x));
  EXPECT_EQ(exp_node->saved_bytes(), 0u);
}

std::string failure_of(Chain& t, const Tensor& root) {
  try {
    t.backward(root);
  } catch (const Error& e) {
    return e.message();
  }
  return "no failure";
}

TEST_F(Chain, FailureSaysWhetherANodeRanBefore) {
  Tensor x = leaf(0.5);
  // The first node to run fails: nothing changed yet.
  EXPECT_EQ(failure_of(*this, through<Fails>(ops::exp(x))), "Fails: refused");
  // After two chain nodes ran.
  EXPECT_EQ(failure_of(*this, ops::sum(ops::tanh(through<Fails>(ops::exp(x))))),
            "backward interrupted at Fails: refused");
  EXPECT_FALSE(has_grad(x));
}

// Doubles the gradient it sees.
struct Doubles final : Hook {
  Doubles() : Hook(Kind::Tensor, 0) {}
  void run(TensorList& grads, const TensorList*) override {
    grads[0] = ops::mul(grads[0], ops::full(grads[0]->context(), grads[0]->dtype(), Dims(), 2.0));
    ++calls;
  }
  int calls = 0;
};

TEST_F(Chain, HookOnADroppedIntermediateRuns) {
  Tensor x = leaf(0.8);
  Tensor mid = ops::tanh(ops::exp(x));
  auto hook = make_ref<Doubles>();
  hook->set_input_nr(mid->output_nr());
  grad_fn_of(*mid)->ensure_hooks().add(grad_fn_of(*mid), hook);
  Tensor loss = ops::sum(ops::mul(mid, constant(1.5)));
  mid.reset();
  backward(loss);
  EXPECT_EQ(hook->calls, 1);
  const double th = std::tanh(std::exp(0.8));
  EXPECT_NEAR(grad(x), 2 * 1.5 * (1 - th * th) * std::exp(0.8), 1e-14);
}

// A plain pass runs chain nodes directly (engine.cc, run_chain); anomaly
// checks send every node through run_node. Both give the same bits, and a
// node with hooks in the middle of a plain chain hands back to the direct
// nodes after it.
TEST_F(Chain, DirectNodesMatchBookkeptNodes) {
  auto run = [&](bool anomaly, bool hooked) {
    Tensor x = leaf(0.4);
    Tensor mid = ops::exp(ops::mul(x, constant(0.9)));
    auto hook = make_ref<Doubles>();
    if (hooked) {
      hook->set_input_nr(mid->output_nr());
      grad_fn_of(*mid)->ensure_hooks().add(grad_fn_of(*mid), hook);
    }
    Tensor loss = ops::sum(ops::add(ops::tanh(ops::mul(mid, constant(0.3))), constant(0.1)));
    mid.reset();
    BackwardOptions o;
    o.detect_anomaly = anomaly;
    run_backward(loss, ops::full(ctx.get(), DType::F64, loss->shape(), 1.0), o);
    EXPECT_EQ(hook->calls, hooked ? 1 : 0);
    return grad(x);
  };
  const double e = std::exp(0.4 * 0.9), th = std::tanh(e * 0.3);
  const double closed = (1 - th * th) * 0.3 * e * 0.9;
  for (bool hooked : {false, true}) {
    const double direct = run(false, hooked), bookkept = run(true, hooked);
    EXPECT_EQ(direct, bookkept) << "hooked " << hooked;
    EXPECT_NEAR(direct, (hooked ? 2 : 1) * closed, 1e-14) << "hooked " << hooked;
  }
}

}  // namespace
}  // namespace ag

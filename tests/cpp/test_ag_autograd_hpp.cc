// Tests of ag/ag_autograd.hpp and the Tensor members it defines: ag::grad,
// the functional API on C++ callables, custom functions, graph export,
// printing, in-place operators, method forms, tags, error names.
#include "ag/ag.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

typedef std::vector<ag::Tensor> Tensors;

std::vector<double> values(const ag::Tensor &t) { return ag::cast(t, AG_F64).to_vector<double>(); }

TEST(AgAutogradHpp, GradReturnsGradientsWithoutTouchingDotGrad) {
  ag::Context ctx(1);
  ag::Tensor x = ag::scalar(ctx, 3.0, AG_F64).requires_grad_();
  ag::Tensor y = ag::scalar(ctx, 2.0, AG_F64).requires_grad_();
  ag::Tensor z = x * x * y;
  Tensors g = ag::grad(z, {x, y}, ag::Tensor(), /*retain_graph=*/true);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_DOUBLE_EQ(g[0].item(), 12.0);  // 2xy
  EXPECT_DOUBLE_EQ(g[1].item(), 9.0);   // x^2
  EXPECT_FALSE(x.grad());
  // create_graph: the gradient can be differentiated again (d2z/dx2 = 2y).
  Tensors gx = ag::grad(z, {x}, ag::Tensor(), true, /*create_graph=*/true);
  EXPECT_DOUBLE_EQ(ag::grad(gx[0], {x})[0].item(), 4.0);
  // An unused input: an empty Tensor with allow_unused, else an error naming ag::grad.
  ag::Tensor w = ag::scalar(ctx, 1.0, AG_F64).requires_grad_();
  EXPECT_FALSE(ag::grad(z, {w}, ag::Tensor(), true, false, /*allow_unused=*/true)[0]);
  try {
    ag::grad(z, {w}, ag::Tensor(), true);
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_GRAPH);
    EXPECT_EQ(std::string(e.what()).compare(0, 10, "ag::grad: "), 0) << e.what();
  }
}

TEST(AgAutogradHpp, FunctionalApiOnCallables) {
  ag::Context ctx(1);
  ag::Tensor v = ag::tensor<double>(ctx, {1.0, 2.0}, {2});
  // f(v) = sum(v^3): gradient 3v^2, Hessian diag(6v).
  auto cube_sum = [](const Tensors &in) { return in[0].pow(3.0).sum(); };
  EXPECT_EQ(values(ag::hessian(cube_sum, {v})[0]), (std::vector<double>{6, 0, 0, 12}));
  EXPECT_EQ(values(ag::jacobian(cube_sum, {v})[0]), (std::vector<double>{3, 12}));
  EXPECT_EQ(values(ag::vjp(cube_sum, {v})[0]), (std::vector<double>{3, 12}));
  ag::Tensor dir = ag::tensor<double>(ctx, {1.0, -1.0}, {2});
  EXPECT_EQ(values(ag::hvp(cube_sum, {v}, {dir})[0]), (std::vector<double>{6, -12}));
  EXPECT_DOUBLE_EQ(ag::jvp(cube_sum, {v}, {dir})[0].item(), 3.0 - 12.0);
  // Two outputs: the Jacobian is row-major by output; vjp weights them.
  auto two = [](const Tensors &in) { return Tensors{in[0] * 2.0, in[0].square()}; };
  Tensors j = ag::jacobian(two, {v}, 2);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(values(j[0]), (std::vector<double>{2, 0, 0, 2}));
  EXPECT_EQ(values(j[1]), (std::vector<double>{2, 0, 0, 4}));
  ag::Tensor ones = ag::ones(ctx, {2}, AG_F64);
  EXPECT_EQ(values(ag::vjp(two, {v}, {ones, ones})[0]), (std::vector<double>{4, 6}));
  // A callable that throws: the call fails with its message, naming the C++ function.
  auto bad = [](const Tensors &) -> ag::Tensor { throw std::runtime_error("no thanks"); };
  try {
    ag::hessian(bad, {v});
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_CALLBACK);
    const std::string what = e.what();
    EXPECT_EQ(what.compare(0, 13, "ag::hessian: "), 0) << what;
    EXPECT_NE(what.find("no thanks"), std::string::npos) << what;
  }
  // The wrong number of outputs is the callable's error too.
  EXPECT_THROW(ag::jacobian(two, {v}, 1), ag::Error);
}

TEST(AgAutogradHpp, CustomFunctionFromCallables) {
  ag::Context ctx(1);
  ag::Tensor x = ag::tensor<float>(ctx, {1, 2, 3}, {3}).requires_grad_();
  int backward_calls = 0;
  auto forward = [](ag::FunctionCtx &f, const Tensors &in) {
    f.save_for_backward(in);
    return in[0].pow(3.0);
  };
  auto backward = [&backward_calls](ag::FunctionCtx &f, const Tensors &grad_out) {
    ++backward_calls;
    const ag::Tensor x0 = f.saved_tensors()[0];
    EXPECT_TRUE(f.needs_input_grad(0));
    return Tensors{grad_out[0] * x0.square() * 3.0};
  };
  ag::Tensor y = ag::apply_function("CubeBackward", forward, backward, {x})[0];
  EXPECT_STREQ(y.grad_fn_name(), "CubeBackward");
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 8, 27}));
  y.sum().backward();
  EXPECT_EQ(backward_calls, 1);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{3, 12, 27}));
  // A backward that throws stops backward with its message.
  auto failing = [](ag::FunctionCtx &, const Tensors &) -> Tensors { throw std::runtime_error("broken backward"); };
  ag::Tensor y2 = ag::apply_function("Broken", forward, failing, {x})[0];
  try {
    y2.sum().backward();
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_CALLBACK);
    EXPECT_EQ(std::string(e.what()).compare(0, 22, "ag::Tensor::backward: "), 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken backward"), std::string::npos) << e.what();
  }
}

TEST(AgAutogradHpp, InPlaceOperatorsAndMethodForms) {
  ag::Context ctx(1);
  ag::Tensor x = ag::tensor<float>(ctx, {1, 2, 3, 4}, {2, 2});
  ag::Tensor same = x;  // shares the handle: in place shows through both
  x += 1.0;
  x *= ag::full(ctx, {2, 2}, 2.0);
  x -= 2.0;
  x /= 2.0;
  EXPECT_EQ(same.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(x.version(), 4);
  EXPECT_DOUBLE_EQ(x.sum().item(), 10.0);
  EXPECT_DOUBLE_EQ(x.mean().item(), 2.5);
  EXPECT_EQ(x.sum({0}).to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(x.sum({1}, true).shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(x.pow(2.0).to_vector<float>(), (std::vector<float>{1, 4, 9, 16}));
  EXPECT_EQ(x.transpose(0, 1).to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(x.matmul(x).to_vector<float>(), (std::vector<float>{7, 10, 15, 22}));
  EXPECT_EQ(x.reshape({4}).neg().abs().to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_NEAR(x.square().sqrt().sum().item(), 10.0, 1e-5);
  EXPECT_NEAR(x.exp().log().relu().tanh().sigmoid().clone().sum().item(), 2.9, 0.1);
  // In place on a leaf that requires grad is refused, named by the operator.
  x.requires_grad_();
  try {
    x += 1.0;
    FAIL() << "no exception";
  } catch (const ag::Error &e) {
    EXPECT_EQ(e.status(), AG_ERR_GRAPH);
    EXPECT_EQ(std::string(e.what()).compare(0, 24, "ag::Tensor::operator+=: "), 0) << e.what();
  }
}

TEST(AgAutogradHpp, TagsRetainGradAndGraphExport) {
  ag::Context ctx(1);
  ag::Tensor w = ag::tensor<float>(ctx, {1, 2}, {2}).requires_grad_().set_tag("weight");
  EXPECT_STREQ(w.tag(), "weight");
  ag::Tensor h;
  {
    ag::TagScope scope("layer");
    h = (w * 3.0).retain_grad();
  }
  EXPECT_TRUE(h.retains_grad());
  ag::Tensor loss = h.sum();
  const std::string dot = ag::graph_dot(loss);
  EXPECT_EQ(dot.compare(0, 10, "digraph ag"), 0) << dot;
  EXPECT_NE(dot.find("weight"), std::string::npos) << dot;
  EXPECT_NE(dot.find("layer"), std::string::npos) << dot;
  const std::string json = ag::graph_json(loss);
  EXPECT_EQ(json.compare(0, 9, "{\"root\": "), 0) << json;
  loss.backward();
  EXPECT_EQ(h.grad().to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_THROW(ag::graph_dot(ag::tensor<float>(ctx, {1}, {1})), ag::Error);  // no graph
}

TEST(AgAutogradHpp, PrintsTensors) {
  ag::Context ctx(1);
  std::ostringstream os;
  os << ag::tensor<float>(ctx, {1, 2.5f, 3, 4}, {2, 2});
  EXPECT_EQ(os.str(), "tensor([[1, 2.5], [3, 4]], dtype=f32)");
  os.str("");
  ag::Tensor x = ag::scalar(ctx, 2.0, AG_F64).requires_grad_();
  os << x << ' ' << x * x << ' ' << ag::Tensor();
  EXPECT_EQ(os.str(), "tensor(2, dtype=f64, requires_grad) tensor(4, dtype=f64, grad_fn=MulBackward) tensor(undefined)");
  os.str("");
  os << ag::zeros(ctx, {2000});
  EXPECT_EQ(os.str(), "tensor(shape=[2000], dtype=f32)");
}

}  // namespace

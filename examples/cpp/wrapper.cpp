// wrapper: the header-only C++ wrapper <ag/ag.hpp> over the C ABI.
//
// RAII handles (no release calls), operators, named ops, exceptions instead
// of status codes, gradients of a small least-squares problem, and the
// functional API on a C++ lambda. Prints "dloss/dw = ..." and
// "hessian trace = ..."; exits 0 when both have the expected values.
#include <ag/ag.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

int main() {
  try {
    ag::Context ctx;  // released when it goes out of scope, like every Tensor

    // loss = sum((x @ w - y)^2) for a 3x2 x and a 2-vector w
    ag::Tensor x = ag::tensor<float>(ctx, {1, 2, 3, 4, 5, 6}, {3, 2});
    ag::Tensor y = ag::tensor<float>(ctx, {1, 2, 3}, {3});
    ag::Tensor w = ag::tensor<float>(ctx, {0.5f, -0.5f}, {2}).requires_grad_();
    ag::Tensor r = ag::matmul(x, w) - y;
    ag::Tensor loss = (r * r).sum();
    loss.backward();
    // dloss/dw = 2 x^T r = [-53, -68], with r = [-1.5, -2.5, -3.5]
    std::vector<float> g = w.grad().to_vector<float>();
    std::printf("loss = %g, dloss/dw = [%g, %g]\n", loss.item(), g[0], g[1]);
    std::cout << "w.grad: " << w.grad() << "\n";

    // ag::grad: gradients of an output with respect to chosen inputs, without touching .grad.
    ag::Tensor s = ag::scalar(ctx, 2.0, AG_F64).requires_grad_();
    ag::Tensor ds = ag::grad(s.pow(3.0), {s})[0];  // 3 s^2 = 12

    // Functional API from a C++ callable: the Hessian of f(v) = sum(v^3) is diag(6 v).
    ag::Tensor v = ag::tensor<double>(ctx, {1.0, 2.0}, {2});
    ag::Tensor h = ag::hessian([](const std::vector<ag::Tensor> &in) { return in[0].pow(3.0).sum(); }, {v})[0];
    std::vector<double> hv = h.to_vector<double>();
    const double trace = hv[0] + hv[3];  // 6 + 12
    std::printf("d(s^3)/ds = %g, hessian trace = %g\n", ds.item(), trace);

    // Failures are exceptions naming the C++ function and carrying ag's message.
    try {
      ag::Tensor bad = ag::matmul(x, x);  // (3,2) @ (3,2) does not fit
    } catch (const ag::Error &e) {
      std::printf("caught: %s\n", e.what());
    }
    const bool ok = g[0] == -53.0f && g[1] == -68.0f && ds.item() == 12.0 && trace == 18.0;
    return ok ? 0 : 1;
  } catch (const ag::Error &e) {
    std::fprintf(stderr, "ag error: %s\n", e.what());
    return 1;
  }
}

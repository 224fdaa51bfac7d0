// The fused optimizer kernel (optim_update) on every Highway target it was
// compiled for that this CPU supports, against a scalar transcription of
// torch.optim's single-tensor formulas in the same dtype: every operation is
// one IEEE add, mul, div or sqrt, so every target must give the same bits.
// Odd sizes end at a PROT_NONE page (a tail access past the end faults).
#include <cmath>
#include <vector>

#include "kernel_test_support.h"
#include "kernels/optim.h"

namespace ag::kernels {
namespace {

using namespace ag::kernels::testing;

// One element of one step, as PyTorch computes it (scalars rounded to T).
template <class T>
void reference(const OptimStep& s, T& p, T g, T& a, T& b, T& c) {
  auto k = [](double v) { return static_cast<T>(v); };
  if (s.maximize) g = -g;
  const bool l2 = s.weight_decay != 0.0 && s.kind != OptimKind::AdamW;
  switch (s.kind) {
    case OptimKind::Sgd: {
      T d = l2 ? g + k(s.weight_decay) * p : g;
      if (s.momentum != 0.0) {
        a = s.first ? d : a * k(s.momentum) + k(1.0 - s.dampening) * d;
        d = s.nesterov ? d + k(s.momentum) * a : a;
      }
      p = p + k(-s.lr) * d;
      return;
    }
    case OptimKind::Adam:
    case OptimKind::AdamW: {
      if (s.kind == OptimKind::AdamW) p = p * k(s.decay);
      if (l2) g = g + k(s.weight_decay) * p;
      a = a * k(s.beta1) + k(1.0 - s.beta1) * g;
      b = b * k(s.beta2) + k(1.0 - s.beta2) * g * g;
      T v = b;
      if (s.amsgrad) {
        c = (std::isnan(c) || c > b) ? c : b;
        v = c;
      }
      const T denom = std::sqrt(v) / k(s.bias2_sqrt) + k(s.eps);
      p = p + k(-s.step_size) * a / denom;
      return;
    }
    case OptimKind::RmsProp: {
      if (l2) g = g + k(s.weight_decay) * p;
      a = a * k(s.alpha) + k(1.0 - s.alpha) * g * g;
      T avg;
      if (s.centered) {
        c = c * k(s.alpha) + k(1.0 - s.alpha) * g;
        avg = std::sqrt(a + T(-1) * c * c);
      } else {
        avg = std::sqrt(a);
      }
      avg = avg + k(s.eps);
      if (s.momentum > 0.0) {
        b = b * k(s.momentum) + T(1) * g / avg;
        p = p + k(-s.lr) * b;
      } else {
        p = p + k(-s.lr) * g / avg;
      }
      return;
    }
    case OptimKind::Adagrad: {
      if (l2) g = g + k(s.weight_decay) * p;
      a = a + T(1) * g * g;
      p = p + k(-s.step_size) * g / (std::sqrt(a) + k(s.eps));
      return;
    }
  }
}

std::vector<OptimStep> configurations() {
  std::vector<OptimStep> out;
  OptimStep s{};
  s.lr = 0.05;
  s.eps = 1e-8;
  s.kind = OptimKind::Sgd;
  s.momentum = 0.9;
  s.weight_decay = 0.01;
  s.dampening = 0.1;
  out.push_back(s);
  s.dampening = 0.0;
  s.nesterov = true;
  s.maximize = true;
  out.push_back(s);
  s.first = true;
  out.push_back(s);
  s = OptimStep{};
  s.kind = OptimKind::Adam;
  s.lr = 1e-3;
  s.beta1 = 0.9;
  s.beta2 = 0.999;
  s.eps = 1e-8;
  s.step_size = 1e-3 / (1 - std::pow(0.9, 3));
  s.bias2_sqrt = std::sqrt(1 - std::pow(0.999, 3));
  s.weight_decay = 0.02;
  out.push_back(s);
  s.amsgrad = true;
  s.kind = OptimKind::AdamW;
  s.decay = 1 - 1e-3 * 0.02;
  out.push_back(s);
  s = OptimStep{};
  s.kind = OptimKind::RmsProp;
  s.lr = 0.01;
  s.alpha = 0.99;
  s.eps = 1e-8;
  s.momentum = 0.5;
  s.centered = true;
  out.push_back(s);
  s.momentum = 0.0;
  s.centered = false;
  s.weight_decay = 0.1;
  out.push_back(s);
  s = OptimStep{};
  s.kind = OptimKind::Adagrad;
  s.step_size = 0.01 / 1.2;
  s.eps = 1e-10;
  s.weight_decay = 0.01;
  out.push_back(s);
  return out;
}

template <class T>
void check_target(const char* target) {
  constexpr DType dt = dtype_of<T>();
  int config = 0;
  for (const OptimStep& s : configurations()) {
    for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(7), size_t(15), size_t(16), size_t(17), size_t(33),
                     size_t(1023)}) {
      Guarded<T> p(n), g(n), a(n), b(n), c(n);
      std::vector<T> rp(n), ra(n), rb(n), rc(n);
      for (size_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(i);
        rp[i] = p[i] = static_cast<T>(std::sin(0.37 * x) * 2);
        g[i] = static_cast<T>(std::cos(0.91 * x) * (i % 5 == 0 ? 1e-3 : 1.5));
        ra[i] = a[i] = static_cast<T>(std::sin(1.3 * x) * 0.1);
        rb[i] = b[i] = static_cast<T>(std::fabs(std::sin(0.7 * x)) + 0.01);  // second moments >= 0
        rc[i] = c[i] = static_cast<T>(std::fabs(std::cos(0.3 * x)) * 0.2);
      }
      // RMSprop centered needs grad_avg^2 <= square_avg: keep c small.
      optim_update(dt, s, p.bytes(), g.bytes(), a.bytes(), b.bytes(), c.bytes(), static_cast<int64_t>(n));
      for (size_t i = 0; i < n; ++i) {
        reference<T>(s, rp[i], g[i], ra[i], rb[i], rc[i]);
        ASSERT_TRUE(same_bits(p[i], rp[i])) << target << " config " << config << " n=" << n << " i=" << i
                                            << " got " << p[i] << " want " << rp[i];
        ASSERT_TRUE(same_bits(a[i], ra[i])) << target << " config " << config << " state 0, i=" << i;
        if (s.kind == OptimKind::Adam || s.kind == OptimKind::AdamW || s.kind == OptimKind::RmsProp) {
          ASSERT_TRUE(same_bits(b[i], rb[i])) << target << " config " << config << " state 1, i=" << i;
        }
      }
    }
    ++config;
  }
}

class OptimOnTarget : public OnTargetTest {
 protected:
  void SetUp() override {
    OnTargetTest::SetUp();
    ASSERT_EQ(optim_target(), GetParam()) << "dispatch did not reach the target";
  }
};

TEST_P(OptimOnTarget, F32MatchesScalar) { check_target<float>(hwy::TargetName(GetParam())); }
TEST_P(OptimOnTarget, F64MatchesScalar) { check_target<double>(hwy::TargetName(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Kernels, OptimOnTarget, ::testing::ValuesIn(targets_to_cover()), target_name);

}  // namespace
}  // namespace ag::kernels

// Fused optimizer updates, compiled for each Highway target. Each kind
// follows the operation order of PyTorch's single-tensor torch.optim code
// (one rounding per PyTorch op, in the parameter's dtype), without FMA, so
// the vector body and the masked tail give the same bits.
#include "kernels/targets.h"  // first: selects the targets

#include <cstddef>

#include "kernels/optim.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/kernels/optim.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ag::kernels::HWY_NAMESPACE {

// Full vectors, then one masked tail: f(i, count) with count <= Lanes.
template <class D, class F>
HWY_INLINE void ForBlocks(D d, size_t n, F&& f) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) f(i, N);
  if (i < n) f(i, n - i);
}

template <class D>
HWY_INLINE hn::Vec<D> Ld(D d, const hn::TFromD<D>* p, size_t count) {
  return count == hn::Lanes(d) ? hn::LoadU(d, p) : LoadTail(d, p, count);
}
template <class D>
HWY_INLINE void St(D d, hn::Vec<D> v, hn::TFromD<D>* p, size_t count) {
  if (count == hn::Lanes(d)) {
    hn::StoreU(v, d, p);
  } else {
    StoreTail(d, v, p, count);
  }
}

// The gradient as the update sees it: negated for maximize, plus
// weight_decay * param (L2 penalty) where the kind adds it to the gradient.
template <class D, class V>
HWY_INLINE V EffectiveGrad(D, V g, V p, bool maximize, bool decay, V wd) {
  if (maximize) g = hn::Neg(g);
  if (decay) g = hn::Add(g, hn::Mul(wd, p));
  return g;
}

// torch.maximum: NaN in either operand gives NaN.
template <class V>
HWY_INLINE V MaxNaN(V a, V b) {
  V r = hn::IfThenElse(hn::Gt(a, b), a, b);
  return hn::IfThenElse(hn::IsNaN(a), a, r);
}

template <class T>
HWY_NOINLINE void Sgd(const OptimStep& s, T* p, const T* g, T* buf, size_t n) {
  const hn::ScalableTag<T> d;
  const auto wd = Const(d, s.weight_decay), mom = Const(d, s.momentum);
  const auto damp1 = Const(d, 1.0 - s.dampening), neg_lr = Const(d, -s.lr);
  const bool decay = s.weight_decay != 0.0, use_mom = s.momentum != 0.0;
  ForBlocks(d, n, [&](size_t i, size_t c) {
    const auto pv = Ld(d, p + i, c);
    auto dp = EffectiveGrad(d, Ld(d, g + i, c), pv, s.maximize, decay, wd);
    if (use_mom) {
      auto b = s.first ? dp : hn::Add(hn::Mul(Ld(d, buf + i, c), mom), hn::Mul(damp1, dp));
      St(d, b, buf + i, c);
      dp = s.nesterov ? hn::Add(dp, hn::Mul(mom, b)) : b;
    }
    St(d, hn::Add(pv, hn::Mul(neg_lr, dp)), p + i, c);
  });
}

template <class T>
HWY_NOINLINE void Adam(const OptimStep& s, T* p, const T* g, T* m, T* v, T* vmax, size_t n) {
  const hn::ScalableTag<T> d;
  const bool adamw = s.kind == OptimKind::AdamW;
  const bool decay = !adamw && s.weight_decay != 0.0;
  const auto wd = Const(d, s.weight_decay), keep = Const(d, s.decay);
  const auto b1 = Const(d, s.beta1), b2 = Const(d, s.beta2);
  const auto c1 = Const(d, 1.0 - s.beta1), c2 = Const(d, 1.0 - s.beta2);
  const auto bc2 = Const(d, s.bias2_sqrt), eps = Const(d, s.eps), neg_step = Const(d, -s.step_size);
  ForBlocks(d, n, [&](size_t i, size_t c) {
    auto pv = Ld(d, p + i, c);
    if (adamw) pv = hn::Mul(pv, keep);  // param.mul_(1 - lr * weight_decay)
    const auto gv = EffectiveGrad(d, Ld(d, g + i, c), pv, s.maximize, decay, wd);
    const auto mv = hn::Add(hn::Mul(Ld(d, m + i, c), b1), hn::Mul(c1, gv));
    auto vv = hn::Add(hn::Mul(Ld(d, v + i, c), b2), hn::Mul(hn::Mul(c2, gv), gv));
    St(d, mv, m + i, c);
    St(d, vv, v + i, c);
    if (s.amsgrad) {
      vv = MaxNaN(Ld(d, vmax + i, c), vv);
      St(d, vv, vmax + i, c);
    }
    const auto denom = hn::Add(hn::Div(hn::Sqrt(vv), bc2), eps);
    St(d, hn::Add(pv, hn::Div(hn::Mul(neg_step, mv), denom)), p + i, c);
  });
}

template <class T>
HWY_NOINLINE void RmsProp(const OptimStep& s, T* p, const T* g, T* sq, T* buf, T* gavg, size_t n) {
  const hn::ScalableTag<T> d;
  const bool decay = s.weight_decay != 0.0, use_mom = s.momentum > 0.0;
  const auto wd = Const(d, s.weight_decay), alpha = Const(d, s.alpha), c = Const(d, 1.0 - s.alpha);
  const auto eps = Const(d, s.eps), mom = Const(d, s.momentum), neg_lr = Const(d, -s.lr);
  const auto one = Const(d, 1.0), minus_one = Const(d, -1.0);
  ForBlocks(d, n, [&](size_t i, size_t cnt) {
    const auto pv = Ld(d, p + i, cnt);
    const auto gv = EffectiveGrad(d, Ld(d, g + i, cnt), pv, s.maximize, decay, wd);
    const auto sv = hn::Add(hn::Mul(Ld(d, sq + i, cnt), alpha), hn::Mul(hn::Mul(c, gv), gv));
    St(d, sv, sq + i, cnt);
    hn::Vec<decltype(d)> avg;
    if (s.centered) {
      const auto ga = hn::Add(hn::Mul(Ld(d, gavg + i, cnt), alpha), hn::Mul(c, gv));
      St(d, ga, gavg + i, cnt);
      avg = hn::Sqrt(hn::Add(sv, hn::Mul(hn::Mul(minus_one, ga), ga)));
    } else {
      avg = hn::Sqrt(sv);
    }
    avg = hn::Add(avg, eps);
    if (use_mom) {
      const auto b = hn::Add(hn::Mul(Ld(d, buf + i, cnt), mom), hn::Div(hn::Mul(one, gv), avg));
      St(d, b, buf + i, cnt);
      St(d, hn::Add(pv, hn::Mul(neg_lr, b)), p + i, cnt);
    } else {
      St(d, hn::Add(pv, hn::Div(hn::Mul(neg_lr, gv), avg)), p + i, cnt);
    }
  });
}

template <class T>
HWY_NOINLINE void Adagrad(const OptimStep& s, T* p, const T* g, T* sum, size_t n) {
  const hn::ScalableTag<T> d;
  const bool decay = s.weight_decay != 0.0;
  const auto wd = Const(d, s.weight_decay), eps = Const(d, s.eps), neg_clr = Const(d, -s.step_size);
  const auto one = Const(d, 1.0);
  ForBlocks(d, n, [&](size_t i, size_t c) {
    const auto pv = Ld(d, p + i, c);
    const auto gv = EffectiveGrad(d, Ld(d, g + i, c), pv, s.maximize, decay, wd);
    const auto sv = hn::Add(Ld(d, sum + i, c), hn::Mul(hn::Mul(one, gv), gv));
    St(d, sv, sum + i, c);
    const auto stdv = hn::Add(hn::Sqrt(sv), eps);
    St(d, hn::Add(pv, hn::Div(hn::Mul(neg_clr, gv), stdv)), p + i, c);
  });
}

template <class T>
void UpdateTyped(const OptimStep& s, char* param, const char* grad, char* s0, char* s1, char* s2, size_t n) {
  T* p = reinterpret_cast<T*>(param);
  const T* g = reinterpret_cast<const T*>(grad);
  T* a = reinterpret_cast<T*>(s0);
  T* b = reinterpret_cast<T*>(s1);
  T* c = reinterpret_cast<T*>(s2);
  switch (s.kind) {
    case OptimKind::Sgd: return Sgd<T>(s, p, g, a, n);
    case OptimKind::Adam:
    case OptimKind::AdamW: return Adam<T>(s, p, g, a, b, c, n);
    case OptimKind::RmsProp: return RmsProp<T>(s, p, g, a, b, c, n);
    case OptimKind::Adagrad: return Adagrad<T>(s, p, g, a, n);
  }
}

void OptimUpdate(DType dt, const OptimStep& s, char* param, const char* grad, char* s0, char* s1, char* s2,
                 int64_t n) {
  const size_t count = static_cast<size_t>(n);
  if (dt == DType::F64) {
    UpdateTyped<double>(s, param, grad, s0, s1, s2, count);
  } else {
    UpdateTyped<float>(s, param, grad, s0, s1, s2, count);
  }
}

int64_t OptimTargetId() { return HWY_TARGET; }

}  // namespace ag::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ag::kernels {

HWY_EXPORT(OptimUpdate);
HWY_EXPORT(OptimTargetId);

void optim_update(DType dt, const OptimStep& s, char* param, const char* grad, char* s0, char* s1, char* s2,
                  int64_t n) {
  HWY_DYNAMIC_DISPATCH(OptimUpdate)(dt, s, param, grad, s0, s1, s2, n);
}

void add_scaled(DType dt, char* y, const char* x, double alpha, int64_t n) {
  OptimStep s{};
  s.kind = OptimKind::Sgd;
  s.lr = -alpha;
  optim_update(dt, s, y, x, nullptr, nullptr, nullptr, n);
}

int64_t optim_target() { return HWY_DYNAMIC_DISPATCH(OptimTargetId)(); }

}  // namespace ag::kernels
#endif  // HWY_ONCE

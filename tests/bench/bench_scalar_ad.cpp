// tests/bench/bench_scalar_ad.cpp - the anchors of workload a (WORKLOADS.md):
// the 10,000-op scalar chain y = y*a; y = y+b; y = tanh(y) with the scalar AD
// tools Debian packages, ADOL-C (operator-overloading tape) and Sacado's Rad
// (reverse mode without a tape file). ag's figures come from bench_replay
// (a and a') in the same run of run_scalar_ad.sh.
//
//   bench_scalar_ad [--reps N]
//
// Series per tool, medians in ns per op (divided by N = 10,000), one JSON
// object per line:
//   adolc:  tape_reverse  taping the forward (trace_on keeping Taylor values)
//                         and one fos_reverse: ADOL-C's eager step;
//           replay        zos_forward (new x, keep) + fos_reverse on the
//                         recorded tape: ADOL-C's replay, ag's a';
//   sacado: fwd_bwd       Rad::ADvar forward + Gradcomp.
// The tools compute in double; ag's workload a runs in float32 (the
// checksums below are met by both within their tolerance).
// Exit 1 when a tool's y or dy/dx misses the published checksum.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef AG_BENCH_ADOLC
#include <adolc/adolc.h>
#endif
#ifdef AG_BENCH_SACADO
#include <Sacado_trad.hpp>
#endif

extern "C" {
#include "bench_harness.h"
}

namespace {

constexpr int kOps = 10000;
constexpr double kA = 0.9999, kB = 0.0001, kX = 0.5;
constexpr double kY = 0.06538919, kGrad = 2.0865358e-09;  // WORKLOADS.md, workload a

template <class T>
T chain(T y) {
  for (int i = 0; i < kOps; ++i) {
    switch (i % 3) {
      case 0: y = y * kA; break;
      case 1: y = y + kB; break;
      default: y = tanh(y); break;
    }
  }
  return y;
}

int g_bad = 0;

void check(const char* tool, double y, double g) {
  if (std::fabs(y - kY) > 5e-5 * kY || std::fabs(g - kGrad) > 1e-3 * kGrad) {
    std::fprintf(stderr, "bench_scalar_ad: %s: y %.9g (want %.9g), dy/dx %.9g (want %.9g)\n", tool, y, kY, g, kGrad);
    g_bad = 1;
  }
}

void print(const char* tool, const char* names[], dvec* series, int count, int reps) {
  std::printf("{\"impl\": \"%s\", \"workload\": \"a_scalar_chain\", \"case\": \"N=%d f64\", \"threads\": 1, \"reps\": %d",
              tool, kOps, reps);
  for (int k = 0; k < count; ++k) std::printf(", \"%s_ns_per_op\": %.2f", names[k], stats(&series[k]).median / kOps);
  std::printf("}\n");
  std::fflush(stdout);
}

#ifdef AG_BENCH_ADOLC
void run_adolc(int reps) {
  const short tag = 1;
  dvec s[2] = {};
  double y = 0, g = 0;
  for (int r = 0; r < reps; ++r) {
    int64_t t0 = now_ns();
    trace_on(tag, 1);  // keep: the Taylor values fos_reverse needs
    adouble ax;
    ax <<= kX;
    adouble ay = chain(adouble(ax));
    ay >>= y;
    trace_off();
    double w = 1.0;
    fos_reverse(tag, 1, 1, &w, &g);
    dv_push(&s[0], static_cast<double>(now_ns() - t0));
    check("adolc eager", y, g);

    const double x = kX + 1e-3 * (r % 2);  // a new leaf value each replay
    t0 = now_ns();
    zos_forward(tag, 1, 1, 1, &x, &y);
    fos_reverse(tag, 1, 1, &w, &g);
    dv_push(&s[1], static_cast<double>(now_ns() - t0));
    if (r % 2 == 0) check("adolc replay", y, g);
  }
  const char* names[] = {"tape_reverse", "replay"};
  print("adolc", names, s, 2, reps);
  dv_free(&s[0]);
  dv_free(&s[1]);
}
#endif

#ifdef AG_BENCH_SACADO
void run_sacado(int reps) {
  using Var = Sacado::Rad::ADvar<double>;
  dvec s = {};
  for (int r = 0; r < reps; ++r) {
    const int64_t t0 = now_ns();
    Var x = kX;
    Var y = chain(Var(x));
    Var::Gradcomp();
    const double g = x.adj();
    dv_push(&s, static_cast<double>(now_ns() - t0));
    check("sacado", y.val(), g);
  }
  const char* names[] = {"fwd_bwd"};
  print("sacado", names, &s, 1, reps);
  dv_free(&s);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_scalar_ad [--reps N]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
#ifdef AG_BENCH_ADOLC
  run_adolc(reps);
#endif
#ifdef AG_BENCH_SACADO
  run_sacado(reps);
#endif
  return g_bad;
}

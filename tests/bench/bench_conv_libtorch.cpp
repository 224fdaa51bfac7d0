// tests/bench/bench_conv_libtorch.cpp - the libtorch side of bench_conv.c:
// torch::conv2d on the same inputs, same phases, same JSON lines with
// "impl": "libtorch". Built by run_conv.sh when Debian's libtorch-dev is
// installed (not by meson: the libtorch headers take long to compile).
//
//   bench_conv_libtorch [--threads T] [--repeats R] [--batch N]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

constexpr int64_t C = 3, H = 64, W = 64, OC = 16, K = 3;

double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double wall_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const size_t r = t.size();
  return r % 2 ? t[r / 2] : 0.5 * (t[r / 2 - 1] + t[r / 2]);
}

// The generator of bench_conv.c.
torch::Tensor filled(std::vector<int64_t> shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  torch::Tensor t = torch::empty(shape, torch::kFloat32);
  float* x = t.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = static_cast<float>(static_cast<double>(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, repeats = 30;
  int64_t batch = 32;
  for (int i = 1; i < argc; ++i) {
    const bool has = i + 1 < argc;
    if (!std::strcmp(argv[i], "--threads") && has) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--repeats") && has) {
      repeats = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--batch") && has) {
      batch = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_conv_libtorch [--threads T] [--repeats R] [--batch N]\n");
      return 2;
    }
  }
  at::set_num_threads(threads);
  torch::Tensor x = filled({batch, C, H, W}, 1), w = filled({OC, C, K, K}, 2), b = filled({OC}, 3);
  for (int backward = 0; backward < 2; ++backward) {
    x.set_requires_grad(backward != 0);
    w.set_requires_grad(backward != 0);
    b.set_requires_grad(backward != 0);
    auto step = [&] {
      torch::Tensor y = torch::conv2d(x, w, b, /*stride=*/1, /*padding=*/1);
      if (backward) {
        x.mutable_grad() = torch::Tensor();
        w.mutable_grad() = torch::Tensor();
        b.mutable_grad() = torch::Tensor();
        y.sum().backward();
      }
      return y;
    };
    std::vector<double> t, cpu;
    for (int r = -3; r < repeats; ++r) {
      const double t0 = wall_ns(), c0 = cpu_ns();
      step();
      if (r >= 0) t.push_back(wall_ns() - t0), cpu.push_back(cpu_ns() - c0);
    }
    const torch::Tensor y = step();
    const double gx = backward ? x.grad().sum().item<double>() : 0.0;
    const double gw = backward ? w.grad().sum().item<double>() : 0.0;
    std::printf(
        "{\"bench\": \"conv2d\", \"impl\": \"libtorch\", \"phase\": \"%s\", \"shape\": [%lld, %lld, %lld, %lld], "
        "\"filters\": %lld, \"kernel\": [%lld, %lld], \"threads\": %d, \"median_ns\": %.0f, \"min_ns\": %.0f, "
        "\"cpu_median_ns\": %.0f, \"repeats\": %d, \"checksum\": {\"y_sum\": %.6g, \"xgrad_sum\": %.6g, "
        "\"wgrad_sum\": %.6g}}\n",
        backward ? "forward_backward" : "forward", static_cast<long long>(batch), static_cast<long long>(C),
        static_cast<long long>(H), static_cast<long long>(W), static_cast<long long>(OC), static_cast<long long>(K),
        static_cast<long long>(K), threads, median(t), *std::min_element(t.begin(), t.end()), median(cpu), repeats,
        y.detach().sum().item<double>(), gx, gw);
    std::fflush(stdout);
  }
  return 0;
}

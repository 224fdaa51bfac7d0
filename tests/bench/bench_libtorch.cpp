// tests/bench/bench_libtorch.cpp - the workloads of WORKLOADS.md on libtorch's
// C++ API: the baseline bench_ag is compared with. run.sh builds it with g++
// when Debian's libtorch-dev is installed:
//
//   g++ -O2 -std=c++17 -DNDEBUG -I/usr/include/torch/csrc/api/include bench_libtorch.cpp
//       -ltorch -ltorch_cpu -lc10 -pthread -o bench_libtorch
//   OMP_NUM_THREADS=T bench_libtorch --threads T [--only a,b,c,d,e,f,g] [--quick]
//       [--out FILE.jsonl] [--quiet-max-wait S] [--quiet-thresh F] [--noise-max F] [--retries K]
//
// One JSON line per workload on stdout (and appended to --out), in the schema
// WORKLOADS.md describes, with the same series names as bench_ag.
#include <torch/torch.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "libtorch_workloads.h"

namespace {

// ------------------------------------------------------------------ inputs
// det_uniform of detdata.py; bench_harness.c has the C copy.
uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h;
}

torch::Tensor det_uniform(int64_t count, uint32_t seed, double lo, double hi) {
  torch::Tensor t = torch::empty({count}, torch::kFloat32);
  float* out = t.data_ptr<float>();
  const uint32_t key = mix32(seed ^ 0xA511E9B3u);
  for (int64_t k = 0; k < count; ++k) {
    const double u = double(mix32(mix32(uint32_t(k)) ^ key) >> 8) / 16777216.0;
    out[k] = float(lo + (hi - lo) * u);
  }
  return t;
}

bool det_uniform_ok() {
  const double want[4] = {0.36608201, 0.53891075, 0.43905634, 0.49409539};
  torch::Tensor t = det_uniform(4, 1, 0.25, 0.75);
  for (int i = 0; i < 4; ++i)
    if (std::fabs(t[i].item<double>() - want[i]) > 5e-9) return false;
  return true;
}

// ------------------------------------------------------------------ timing and statistics
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Exclusive quantile, the method of Python's statistics.quantiles (bench_ag uses it too).
double quantile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  if (n < 2) return sorted[0];
  const double pos = double(n + 1) * q;
  const long j = long(std::floor(pos));
  if (j < 1) return sorted[0];
  if (j >= long(n)) return sorted[n - 1];
  return sorted[j - 1] + (sorted[j] - sorted[j - 1]) * (pos - double(j));
}

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(12);
  o << v;
  return o.str();
}

std::string stats_json(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return "{\"median_ns\": " + fmt(med) + ", \"min_ns\": " + fmt(v[0]) + ", \"p25_ns\": " + fmt(quantile(v, 0.25)) +
         ", \"p75_ns\": " + fmt(quantile(v, 0.75)) + ", \"n\": " + std::to_string(n) + "}";
}

using Series = std::vector<std::pair<std::string, std::vector<double>>>;

std::string series_json(const Series& series) {
  std::string s = "{";
  for (const auto& [name, values] : series) {
    if (s.size() > 1) s += ", ";
    s += "\"" + name + "\": " + stats_json(values);
  }
  return s + "}";
}

// ------------------------------------------------------------------ machine noise
struct CpuTimes {
  long long busy = 0, idle = 0, steal = 0;
};

CpuTimes read_cpu() {
  std::ifstream f("/proc/stat");
  std::string label;
  long long v[8] = {0};
  f >> label;
  for (long long& x : v) f >> x;
  CpuTimes c;
  c.idle = v[3] + v[4];  // idle + iowait
  c.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  c.steal = v[7];
  return c;
}

double own_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

double g_quiet_thresh = 0.15, g_quiet_max_wait = 90.0, g_noise_limit = 0.10;
int g_retries = 2, g_threads = 1;
bool g_quick = false;
std::ofstream g_out;

// Waits for a quiet machine; returns "[busy fraction, seconds waited]".
std::string wait_quiet() {
  const int64_t start = now_ns();
  for (;;) {
    const CpuTimes a = read_cpu();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const CpuTimes b = read_cpu();
    const double total = double((b.busy + b.idle) - (a.busy + a.idle));
    const double busy = total > 0 ? double(b.busy - a.busy) / total : 0.0;
    const double waited = double(now_ns() - start) * 1e-9;
    if (busy <= g_quiet_thresh || waited >= g_quiet_max_wait) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "[%.3f, %.1f]", busy, waited);
      return buf;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// CPU time other processes took while a workload ran, as a fraction of the machine.
struct NoiseMonitor {
  CpuTimes start = read_cpu();
  double own0 = own_cpu_s();
  int64_t t0 = now_ns();
  double others = 0.0;
  std::string finish() {
    const CpuTimes end = read_cpu();
    const double hz = double(sysconf(_SC_CLK_TCK));
    const double wall = double(now_ns() - t0) * 1e-9;
    const double capacity = wall * double(std::thread::hardware_concurrency());
    others = (double(end.busy - start.busy) / hz - (own_cpu_s() - own0)) / capacity;
    char buf[128];
    std::snprintf(buf, sizeof buf, "{\"others\": %.3f, \"steal\": %.3f, \"wall_s\": %.2f}", std::max(0.0, others),
                  double(end.steal - start.steal) / hz / capacity, wall);
    return buf;
  }
};

void print_line(const std::string& body) {
  const std::string line = "{\"impl\": \"libtorch\", \"threads\": " + std::to_string(g_threads) + ", " + body + "}";
  std::cout << line << std::endl;
  if (g_out.is_open()) g_out << line << "\n" << std::flush;
}

// A workload returns its JSON body and the noise it saw; a noisy run is
// repeated (g_retries times at most) and the quietest one printed.
struct Result {
  std::string body;
  double noise;
};

void run_workload(const std::function<Result()>& fn) {
  Result best{"", 1e9};
  int attempts = 0;
  while (attempts <= g_retries) {
    ++attempts;
    Result r = fn();
    if (r.noise < best.noise) best = r;
    if (r.noise <= g_noise_limit) break;
  }
  print_line(best.body + ", \"attempts\": " + std::to_string(attempts));
}

Result finish(std::string body, const std::string& waited, NoiseMonitor& mon) {
  body += ", \"wait\": " + waited + ", \"noise\": " + mon.finish();
  return {body, mon.others};
}

void drop_grad(torch::Tensor& t) { t.mutable_grad() = torch::Tensor(); }

double grad_sum(const torch::Tensor& t) { return t.grad().to(torch::kFloat64).sum().item<double>(); }

// ------------------------------------------------------------------ a, b: chains
using workloads::chain;

Result chain_workload(bool scalar) {
  const std::vector<int64_t> shape = scalar ? std::vector<int64_t>{} : std::vector<int64_t>{16};
  torch::Tensor x = scalar ? torch::full({}, 0.5f) : det_uniform(16, 1, 0.25, 0.75);
  const torch::Tensor a = torch::full(shape, 0.9999f), b = torch::full(shape, 0.0001f);
  x.requires_grad_(true);
  const int warm = g_quick ? 1 : 3, reps = g_quick ? 3 : 21;
  const std::string waited = wait_quiet();
  NoiseMonitor mon;
  std::vector<double> fwd, bwd, fre, total, nograd;
  double y_check = 0, g_check = 0;
  for (int it = 0; it < warm + reps; ++it) {
    drop_grad(x);
    const int64_t t0 = now_ns();
    torch::Tensor y = chain(x, a, b);
    if (!scalar) y = y.sum();
    const int64_t t1 = now_ns();
    y.backward();
    const int64_t t2 = now_ns();
    if (it == 0) {
      y_check = y.item<double>();
      g_check = grad_sum(x);
    }
    y = torch::Tensor();  // the last handle on the graph
    const int64_t t3 = now_ns();
    int64_t n0, n1;
    {
      torch::NoGradGuard off;
      n0 = now_ns();
      torch::Tensor z = chain(x, a, b);
      if (!scalar) z = z.sum();
      n1 = now_ns();
    }
    if (it < warm) continue;
    fwd.push_back(double(t1 - t0));
    bwd.push_back(double(t2 - t1));
    fre.push_back(double(t3 - t2));
    total.push_back(double(t3 - t0));
    nograd.push_back(double(n1 - n0));
  }
  std::string body = std::string("\"workload\": \"") + (scalar ? "a_scalar_chain" : "b_small_chain16") +
                     "\", \"case\": \"N=10000 shape=" + (scalar ? "[]" : "[16]") + "\", \"ops\": 10000" +
                     ", \"series\": " +
                     series_json({{"fwd", fwd}, {"bwd", bwd}, {"free", fre}, {"total", total}, {"fwd_nograd", nograd}}) +
                     ", \"check\": {\"y\": " + fmt(y_check) + ", \"xgrad_sum\": " + fmt(g_check) + "}";
  return finish(body, waited, mon);
}

// ------------------------------------------------------------------ c: large elementwise
long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

Result elementwise_workload(int64_t n) {
  int reps = n == (1 << 20) ? 30 : n == (1 << 22) ? 15 : 9;
  int warm = n <= (1 << 22) ? 3 : 2;
  if (g_quick) reps = 3, warm = 1;
  torch::Tensor x = det_uniform(n, 11, -1.0, 1.0).requires_grad_(true);
  torch::Tensor y = det_uniform(n, 12, -1.0, 1.0).requires_grad_(true);
  torch::Tensor z = torch::empty({n});
  const std::string waited = wait_quiet();
  NoiseMonitor mon;
  std::vector<double> fwd, bwd, total, fre, faults, r_add, r_tanh, r_sum, r_copy;
  double checks[3] = {0, 0, 0};
  for (int it = 0; it < warm + reps; ++it) {
    drop_grad(x);
    drop_grad(y);
    const long f0 = minor_faults();
    const int64_t t0 = now_ns();
    torch::Tensor loss = torch::tanh(x * y + x).sum();
    const int64_t t1 = now_ns();
    loss.backward();
    const int64_t t2 = now_ns();
    if (it == 0) checks[0] = loss.item<double>(), checks[1] = grad_sum(x), checks[2] = grad_sum(y);
    loss = torch::Tensor();
    const int64_t t3 = now_ns();
    const long f1 = minor_faults();
    if (it < warm) continue;
    fwd.push_back(double(t1 - t0));
    bwd.push_back(double(t2 - t1));
    total.push_back(double(t2 - t0));
    fre.push_back(double(t3 - t2));
    faults.push_back(double(f1 - f0));
  }
  {
    torch::NoGradGuard off;
    for (int it = 0; it < warm + reps; ++it) {
      const int64_t t0 = now_ns();
      torch::add_out(z, x, y);
      const int64_t t1 = now_ns();
      torch::tanh_out(z, x);
      const int64_t t2 = now_ns();
      torch::Tensor s = x.sum();
      const int64_t t3 = now_ns();
      z.copy_(x);
      const int64_t t4 = now_ns();
      if (it < warm) continue;
      r_add.push_back(double(t1 - t0));
      r_tanh.push_back(double(t2 - t1));
      r_sum.push_back(double(t3 - t2));
      r_copy.push_back(double(t4 - t3));
    }
  }
  std::sort(faults.begin(), faults.end());
  const double nd = double(n);
  std::string body = "\"workload\": \"c_large_elementwise\", \"case\": \"n=" + std::to_string(n) +
                     "\", \"n\": " + std::to_string(n) + ", \"series\": " +
                     series_json({{"fwd", fwd}, {"bwd", bwd}, {"total", total}, {"free", fre}, {"ref_add_out", r_add},
                                  {"ref_tanh_out", r_tanh}, {"ref_sum", r_sum}, {"ref_copy", r_copy}}) +
                     ", \"bytes\": {\"fwd\": " + fmt(36 * nd) + ", \"bwd\": " + fmt(44 * nd) +
                     ", \"total\": " + fmt(80 * nd) + ", \"ref_add_out\": " + fmt(12 * nd) +
                     ", \"ref_tanh_out\": " + fmt(8 * nd) + ", \"ref_sum\": " + fmt(4 * nd) +
                     ", \"ref_copy\": " + fmt(8 * nd) + "}, \"minor_faults_per_iter\": " +
                     fmt(faults[faults.size() / 2]) + ", \"check\": {\"loss\": " + fmt(checks[0]) +
                     ", \"xgrad_sum\": " + fmt(checks[1]) + ", \"ygrad_sum\": " + fmt(checks[2]) + "}";
  return finish(body, waited, mon);
}

// ------------------------------------------------------------------ d: MLP step
Result mlp_workload(bool linear) {
  workloads::Mlp m = workloads::mlp_model(det_uniform, linear);
  const int warm = g_quick ? 2 : 10, reps = g_quick ? 5 : 200;
  const std::string waited = wait_quiet();
  NoiseMonitor mon;
  std::vector<double> step, fwd, bwd, upd, losses;
  for (int it = 0; it < warm + reps; ++it) {
    const int64_t t0 = now_ns();
    torch::Tensor loss = workloads::mlp_loss(m);
    const int64_t t1 = now_ns();
    loss.backward();
    const int64_t t2 = now_ns();
    workloads::mlp_update(m, 0.01);
    const int64_t t3 = now_ns();
    if (it < 3) losses.push_back(loss.item<double>());
    if (it < warm) continue;
    step.push_back(double(t3 - t0));
    fwd.push_back(double(t1 - t0));
    bwd.push_back(double(t2 - t1));
    upd.push_back(double(t3 - t2));
  }
  std::string body = std::string("\"workload\": \"d_mlp_step\", \"case\": \"B=64 784-256-256-10 ") +
                     (linear ? "linear" : "matmul") + "\", \"series\": " +
                     series_json({{"step", step}, {"fwd", fwd}, {"bwd", bwd}, {"update", upd}}) +
                     ", \"check\": {\"loss_steps_0_1_2\": [" + fmt(losses[0]) + ", " + fmt(losses[1]) + ", " +
                     fmt(losses[2]) + "]}";
  return finish(body, waited, mon);
}

// ------------------------------------------------------------------ e: fan-in
Result fanin_workload() {
  torch::Tensor x = det_uniform(64, 31, -1.0, 1.0).requires_grad_(true);
  std::vector<torch::Tensor> w;
  for (int i = 0; i < workloads::kBranches; ++i) w.push_back(det_uniform(64, 1000 + i, -1.0, 1.0).requires_grad_(true));
  const int warm = g_quick ? 1 : 3, reps = g_quick ? 3 : 30;
  const std::string waited = wait_quiet();
  NoiseMonitor mon;
  std::vector<double> fwd, bwd, fre, total;
  double checks[3] = {0, 0, 0};
  for (int it = 0; it < warm + reps; ++it) {
    drop_grad(x);
    for (torch::Tensor& t : w) drop_grad(t);
    const int64_t t0 = now_ns();
    torch::Tensor loss = workloads::fanin_loss(x, w);
    const int64_t t1 = now_ns();
    loss.backward();
    const int64_t t2 = now_ns();
    if (it == 0) checks[0] = loss.item<double>(), checks[1] = grad_sum(x), checks[2] = grad_sum(w.back());
    loss = torch::Tensor();
    const int64_t t3 = now_ns();
    if (it < warm) continue;
    fwd.push_back(double(t1 - t0));
    bwd.push_back(double(t2 - t1));
    fre.push_back(double(t3 - t2));
    total.push_back(double(t3 - t0));
  }
  std::string body = "\"workload\": \"e_fanin\", \"case\": \"K=1000 D=64\", \"ops\": 2999, \"series\": " +
                     series_json({{"fwd", fwd}, {"bwd", bwd}, {"free", fre}, {"total", total}}) +
                     ", \"check\": {\"loss\": " + fmt(checks[0]) + ", \"xgrad_sum\": " + fmt(checks[1]) +
                     ", \"w999grad_sum\": " + fmt(checks[2]) + "}";
  return finish(body, waited, mon);
}

// ------------------------------------------------------------------ f: peak memory
long max_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

long vm_rss_kib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.compare(0, 6, "VmRSS:") == 0) return std::atol(line.c_str() + 6);
  return -1;
}

void peak_memory_workload() {
  long peak[3], now[3];
  peak[0] = max_rss_kib(), now[0] = vm_rss_kib();
  const int64_t n = int64_t(1) << 24;
  torch::Tensor x = det_uniform(n, 11, -1.0, 1.0).requires_grad_(true);
  torch::Tensor y = det_uniform(n, 12, -1.0, 1.0).requires_grad_(true);
  peak[1] = max_rss_kib(), now[1] = vm_rss_kib();
  for (int i = 0; i < 3; ++i) {
    drop_grad(x);
    drop_grad(y);
    torch::tanh(x * y + x).sum().backward();
  }
  peak[2] = max_rss_kib(), now[2] = vm_rss_kib();
  auto obj = [](const long* v) {
    return "{\"after_startup\": " + std::to_string(v[0]) + ", \"after_inputs\": " + std::to_string(v[1]) +
           ", \"after_fwd_bwd\": " + std::to_string(v[2]) + "}";
  };
  print_line("\"workload\": \"f_peak_rss\", \"case\": \"c at n=16M, 3 iterations\", \"maxrss_kib\": " + obj(peak) +
             ", \"vmrss_kib\": " + obj(now));
}

// ------------------------------------------------------------------ g: dispatch
std::vector<double> per_call(const std::function<void()>& call, int calls, int reps, bool record) {
  std::vector<double> out;
  for (int it = 0; it < 2 + reps; ++it) {
    torch::AutoGradMode mode(record);
    const int64_t t0 = now_ns();
    for (int i = 0; i < calls; ++i) call();
    const int64_t t1 = now_ns();
    if (it >= 2) out.push_back(double(t1 - t0) / calls);
  }
  return out;
}

Result dispatch_workload() {
  const int calls = g_quick ? 2000 : 20000, reps = g_quick ? 3 : 15;
  const torch::Tensor plain = torch::full({}, 0.5f), c = torch::full({}, 0.25f);
  const torch::Tensor leaf = torch::full({}, 0.5f).requires_grad_(true);
  const std::string waited = wait_quiet();
  NoiseMonitor mon;
  Series series;
  const char* ops[3] = {"mul", "add", "tanh"};
  const char* modes[3] = {"nograd", "grad_off_inputs", "grad"};
  for (int op = 0; op < 3; ++op)
    for (int m = 0; m < 3; ++m) {
      const torch::Tensor& u = m == 2 ? leaf : plain;
      std::function<void()> call;
      if (op == 0) call = [&] { torch::Tensor r = u * c; };
      else if (op == 1) call = [&] { torch::Tensor r = u + c; };
      else call = [&] { torch::Tensor r = torch::tanh(u); };
      series.push_back({std::string(ops[op]) + "_" + modes[m], per_call(call, calls, reps, m != 0)});
    }
  torch::Tensor out = torch::empty({});
  series.push_back({"mul_out_nograd", per_call([&] { torch::mul_out(out, plain, c); }, calls, reps, false)});
  std::string body = "\"workload\": \"g_dispatch\", \"case\": \"0-dim float32, M=" + std::to_string(calls) +
                     " calls\", \"series\": " + series_json(series);
  return finish(body, waited, mon);
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = "a,b,c,d,e,g";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--quick") g_quick = true;
    else if (arg == "--threads" && has_value) g_threads = std::atoi(argv[++i]);
    else if (arg == "--only" && has_value) only = argv[++i];
    else if (arg == "--out" && has_value) g_out.open(argv[++i], std::ios::app);
    else if (arg == "--quiet-thresh" && has_value) g_quiet_thresh = std::atof(argv[++i]);
    else if (arg == "--quiet-max-wait" && has_value) g_quiet_max_wait = std::atof(argv[++i]);
    else if (arg == "--noise-max" && has_value) g_noise_limit = std::atof(argv[++i]);
    else if (arg == "--retries" && has_value) g_retries = std::atoi(argv[++i]);
    else {
      std::cerr << "bench_libtorch: unknown argument " << arg << "\n";
      return 2;
    }
  }
  // As bench_ag: --quick also skips the waiting and the retries unless given.
  if (g_quick) {
    bool wait_given = false, retries_given = false;
    for (int i = 1; i < argc; ++i) {
      wait_given |= std::string(argv[i]) == "--quiet-max-wait";
      retries_given |= std::string(argv[i]) == "--retries";
    }
    if (!wait_given) g_quiet_max_wait = 0;
    if (!retries_given) g_retries = 0;
  }
  torch::set_num_threads(g_threads);
  if (torch::get_num_threads() != g_threads) {
    std::cerr << "bench_libtorch: could not use " << g_threads << " threads\n";
    return 1;
  }
  if (!det_uniform_ok()) {
    std::cerr << "bench_libtorch: det_uniform disagrees with WORKLOADS.md's reference values\n";
    return 1;
  }
  std::set<std::string> sel;
  std::stringstream list(only);
  for (std::string w; std::getline(list, w, ',');) sel.insert(w);
  const char* omp = std::getenv("OMP_NUM_THREADS");
  print_line(std::string("\"workload\": \"_env\", \"torch\": \"") + TORCH_VERSION + "\", \"num_threads\": " +
             std::to_string(torch::get_num_threads()) + ", \"env\": {\"OMP_NUM_THREADS\": \"" + (omp ? omp : "") +
             "\"}");
  if (sel.count("a")) run_workload([] { return chain_workload(true); });
  if (sel.count("b")) run_workload([] { return chain_workload(false); });
  if (sel.count("c"))
    for (int64_t n : {int64_t(1) << 20, int64_t(1) << 22, int64_t(1) << 24})
      run_workload([n] { return elementwise_workload(n); });
  if (sel.count("d")) {
    run_workload([] { return mlp_workload(false); });
    run_workload([] { return mlp_workload(true); });
  }
  if (sel.count("e")) run_workload(fanin_workload);
  if (sel.count("f")) peak_memory_workload();
  if (sel.count("g")) run_workload(dispatch_workload);
  return 0;
}

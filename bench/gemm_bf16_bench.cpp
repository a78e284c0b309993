// fp32 linear() against linear_bf16, with linear_int8 for reference, on the dense
// shapes of bge-small: ms and GFLOP/s (2·m·n·k per call, bf16 and int8 counted the same)
// and the bf16 speedup over fp32.
// Usage: gemm_bf16_bench [tokens=4096] [threads=2] [wall|cpu]
// cpu times the process's CPU seconds instead of wall seconds: with threads=1 on a machine
// shared with other work, that leaves out the time the thread waited for a core (with more
// threads it would count the pool's spinning too).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string_view>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemm_bf16.hpp"
#include "kernels/gemm_int8.hpp"

namespace {

using warden::kernels::Activation;

bool g_cpu_clock = false;

double now_seconds() {
  if (g_cpu_clock) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds of each of fns, run interleaved (one call of each per round, after a
// warm-up round): on a shared machine every kernel then sees the same background load, so
// the ratios hold up even when the absolute figures drift.
template <typename... Fns>
std::array<double, sizeof...(Fns)> median_seconds(Fns&&... fns) {
  constexpr int kRounds = 15;
  std::array<std::vector<double>, sizeof...(Fns)> times;
  for (int round = -1; round < kRounds; ++round) {
    std::size_t i = 0;
    const auto time_one = [&](auto& fn) {
      const double t0 = now_seconds();
      fn();
      const double t1 = now_seconds();
      if (round >= 0) times[i].push_back(t1 - t0);
      ++i;
    };
    (time_one(fns), ...);
  }
  std::array<double, sizeof...(Fns)> medians{};
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::sort(times[i].begin(), times[i].end());
    medians[i] = times[i][times[i].size() / 2];
  }
  return medians;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t m = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4096;
  const std::size_t threads = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2;
  g_cpu_clock = argc > 3 && std::string_view(argv[3]) == "cpu";
  warden::ThreadPool pool(threads);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  struct Shape {
    const char* name;
    std::size_t n, k;
    Activation act;
  };
  const Shape shapes[] = {{"1152x384", 1152, 384, Activation::None},
                          {"384x384", 384, 384, Activation::None},
                          {"1536x384", 1536, 384, Activation::None},
                          {"1536x384+gelu", 1536, 384, Activation::Gelu},
                          {"384x1536", 384, 1536, Activation::None}};
  std::printf("m=%zu threads=%zu isa=%s avx512_bf16=%d clock=%s\n", m, pool.size(),
              warden::isa_name(warden::active_isa()).data(), warden::cpu_features().avx512_bf16 ? 1 : 0,
              g_cpu_clock ? "cpu" : "wall");
  std::printf("%-14s %9s %9s %9s %9s %8s %9s %9s\n", "shape", "fp32 ms", "GFLOP/s", "bf16 ms", "GFLOP/s",
              "speedup", "int8 ms", "GFLOP/s");
  for (const auto& s : shapes) {
    std::vector<float> a(m * s.k), w(s.n * s.k), bias(s.n), c(m * s.n);
    for (auto& x : a) x = dist(rng);
    for (auto& x : w) x = 0.05F * dist(rng);
    const warden::kernels::PackedLinear fp(w, s.n, s.k, bias);
    const warden::kernels::Bf16Linear bf(w, s.n, s.k, bias);
    const warden::kernels::QuantizedLinear q(w, s.n, s.k, bias);
    const double flops = 2.0 * double(m) * double(s.n) * double(s.k);
    const auto [t_fp, t_bf, t_q] = median_seconds(
        [&] { warden::kernels::linear(a.data(), s.k, m, fp, c.data(), s.n, {s.act}, &pool); },
        [&] { warden::kernels::linear_bf16(a.data(), s.k, m, bf, c.data(), s.n, {s.act}, &pool); },
        [&] { warden::kernels::linear_int8(a.data(), s.k, m, q, c.data(), s.n, {s.act}, &pool); });
    std::printf("%-14s %9.3f %9.1f %9.3f %9.1f %8.2f %9.3f %9.1f\n", s.name, t_fp * 1e3, flops / t_fp * 1e-9,
                t_bf * 1e3, flops / t_bf * 1e-9, t_fp / t_bf, t_q * 1e3, flops / t_q * 1e-9);
  }
  return 0;
}

// fp32 linear() against linear_int8 on the dense shapes of bge-small: ms and
// GFLOP/s (2·m·n·k per call, int8 counted the same) and the int8 speedup.
// Usage: gemm_int8_bench [tokens=4096] [threads=2]; WARDEN_ISA=avx2|portable lowers the ISA of both.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemm_int8.hpp"

namespace {

using warden::kernels::Activation;

template <typename Fn>
double median_seconds(Fn&& fn) {
  fn();  // warm-up
  std::vector<double> times;
  for (int rep = 0; rep < 9; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t m = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4096;
  const std::size_t threads = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2;
  warden::ThreadPool pool(threads);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  struct Shape {
    const char* name;
    std::size_t n, k;
    Activation act;
  };
  const Shape shapes[] = {{"384x384", 384, 384, Activation::None},
                          {"1536x384", 1536, 384, Activation::None},
                          {"1536x384+gelu", 1536, 384, Activation::Gelu},
                          {"384x1536", 384, 1536, Activation::None}};
  // Both layers follow active_isa(): WARDEN_ISA=avx2 (or portable) lowers them together.
  const char* kernel_names[] = {"portable", "avx2", "avx512-vnni"};
  const warden::kernels::QuantizedLinear probe(std::vector<float>(1, 1.0F), 1, 1, {});
  std::printf("m=%zu threads=%zu isa=%s int8 kernel=%s\n", m, pool.size(),
              std::string(warden::isa_name(warden::active_isa())).c_str(),
              kernel_names[static_cast<int>(probe.kernel())]);
  std::printf("%-14s %9s %9s %9s %9s %8s\n", "shape", "fp32 ms", "GFLOP/s", "int8 ms", "GFLOP/s", "speedup");
  for (const auto& s : shapes) {
    std::vector<float> a(m * s.k), w(s.n * s.k), bias(s.n), c(m * s.n);
    for (auto& x : a) x = dist(rng);
    for (auto& x : w) x = 0.05F * dist(rng);
    const warden::kernels::PackedLinear fp(w, s.n, s.k, bias);
    const warden::kernels::QuantizedLinear q(w, s.n, s.k, bias);
    const double flops = 2.0 * double(m) * double(s.n) * double(s.k);
    const double t_fp =
        median_seconds([&] { warden::kernels::linear(a.data(), s.k, m, fp, c.data(), s.n, {s.act}, &pool); });
    const double t_q = median_seconds(
        [&] { warden::kernels::linear_int8(a.data(), s.k, m, q, c.data(), s.n, {s.act}, &pool); });
    std::printf("%-14s %9.3f %9.1f %9.3f %9.1f %8.2f\n", s.name, t_fp * 1e3, flops / t_fp * 1e-9, t_q * 1e3,
                flops / t_q * 1e-9, t_fp / t_q);
  }
  return 0;
}

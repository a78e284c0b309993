// GEMM throughput on the shapes of a BERT layer: GFLOP/s per ISA and thread count, and
// the fraction of the machine's peak. Usage: gemm_bench [tokens=4096] [hidden=384]
// [ffn=1536] [threads=all]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gated_dense.hpp"
#include "kernels/gemm.hpp"

namespace {

using warden::Isa;
using warden::kernels::Activation;
using warden::kernels::PackedLinear;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_linear(const std::vector<float>& a, std::size_t m, const PackedLinear& w, std::vector<float>& c,
                   Activation act, warden::ThreadPool* pool) {
  std::vector<double> times;
  for (int rep = 0; rep < 9; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    warden::kernels::linear(a.data(), w.k(), m, w, c.data(), w.n(), {act}, pool);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  return median(times);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t m = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4096;
  const std::size_t h = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 384;
  const std::size_t f = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1536;
  const std::size_t threads = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : warden::available_cpus();
  warden::ThreadPool pool(threads);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  struct Shape {
    const char* name;
    std::size_t n, k;
    Activation act;
  };
  const Shape shapes[] = {{"qkv", 3 * h, h, Activation::None},
                          {"attn_out", h, h, Activation::None},
                          {"ffn_in+gelu", f, h, Activation::Gelu},
                          {"ffn_out", h, f, Activation::None}};
  std::printf("m=%zu hidden=%zu ffn=%zu threads=%zu\n", m, h, f, pool.size());
  std::printf("%-8s %-12s %10s %10s\n", "isa", "shape", "ms", "GFLOP/s");
  std::vector<Isa> isas{Isa::Portable};
  if (warden::cpu_features().avx2_fma) isas.push_back(Isa::Avx2);
  if (warden::cpu_features().avx512) isas.push_back(Isa::Avx512);
#if defined(__aarch64__)
  if (warden::cpu_features().neon) isas.push_back(Isa::Neon);
#endif
  for (const Isa isa : isas) {
    double total_flops = 0, total_time = 0;
    for (const auto& s : shapes) {
      std::vector<float> a(m * s.k), w(s.n * s.k), bias(s.n), c(m * s.n);
      for (auto& x : a) x = dist(rng);
      for (auto& x : w) x = dist(rng);
      const PackedLinear packed(w, s.n, s.k, bias, isa);
      const double t = time_linear(a, m, packed, c, s.act, &pool);
      const double flops = 2.0 * double(m) * double(s.n) * double(s.k);
      total_flops += flops;
      total_time += t;
      std::printf("%-8s %-12s %10.3f %10.1f\n", std::string(warden::isa_name(isa)).c_str(), s.name, t * 1e3,
                  flops / t * 1e-9);
    }
    std::printf("%-8s %-12s %10.3f %10.1f\n", std::string(warden::isa_name(isa)).c_str(), "layer",
                total_time * 1e3, total_flops / total_time * 1e-9);
    // A gated FFN input (GEGLU, JinaBERT's): 2·ffn product columns, ffn gated outputs.
    std::vector<float> a(m * h), wa(f * h), wg(f * h), c(m * f);
    for (auto& x : a) x = dist(rng);
    for (auto& x : wa) x = dist(rng);
    for (auto& x : wg) x = dist(rng);
    const auto gated =
        warden::kernels::GatedDense::make(warden::Precision::Float32, wa, wg, f, h, {}, {}, isa);
    std::vector<double> times;
    for (int rep = 0; rep < 9; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      warden::kernels::gated_dense(a.data(), h, m, gated, Activation::Gelu, c.data(), f, &pool);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double t = median(times);
    std::printf("%-8s %-12s %10.3f %10.1f\n", std::string(warden::isa_name(isa)).c_str(), "ffn_geglu",
                t * 1e3, 4.0 * double(m) * double(f) * double(h) / t * 1e-9);
  }
  return 0;
}

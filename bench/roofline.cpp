#include "roofline.hpp"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/cpu_features.hpp"
#include "kernels/amx.hpp"

namespace warden::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Keeps a result alive without printing it.
std::atomic<std::uint64_t> g_sink{0};

// GCC 12's _mm512_reduce_* trip -Wuninitialized: one lane through memory is enough here.
__attribute__((target("avx512f"))) void sink_ps(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  g_sink += static_cast<std::uint64_t>(lanes[0]);
}
__attribute__((target("avx512f"))) void sink_si(__m512i v) {
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  g_sink += lanes[0];
}

constexpr long kPeakIters = 4'000'000;

// 16 independent chains: enough to cover the FMA latency (4 cycles) on two ports.
__attribute__((target("avx512f"))) double fp32_loop() {
  __m512 acc[16];
  for (auto& a : acc) a = _mm512_set1_ps(1.0F);
  const __m512 m = _mm512_set1_ps(0.999999F);
  const __m512 b = _mm512_set1_ps(1e-7F);
  const auto t0 = Clock::now();
  for (long i = 0; i < kPeakIters; ++i) {
#pragma GCC unroll 16
    for (auto& a : acc) a = _mm512_fmadd_ps(a, m, b);
  }
  const double secs = seconds_since(t0);
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  sink_ps(s);
  return 2.0 * 16 * 16 * static_cast<double>(kPeakIters) / secs;
}

__attribute__((target("avx512f,avx512bf16"))) double bf16_loop() {
  __m512 acc[16];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const __m512bh x = __builtin_bit_cast(__m512bh, _mm512_set1_epi16(0x3F80));  // 1.0 in bf16
  const __m512bh y = __builtin_bit_cast(__m512bh, _mm512_set1_epi16(0x3380));  // a tiny value
  const auto t0 = Clock::now();
  for (long i = 0; i < kPeakIters; ++i) {
#pragma GCC unroll 16
    for (auto& a : acc) a = _mm512_dpbf16_ps(a, x, y);
  }
  const double secs = seconds_since(t0);
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  sink_ps(s);
  return 2.0 * 32 * 16 * static_cast<double>(kPeakIters) / secs;  // 32 products per instruction
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) double int8_loop() {
  __m512i acc[16];
  for (auto& a : acc) a = _mm512_setzero_si512();
  const __m512i x = _mm512_set1_epi8(3);
  const __m512i y = _mm512_set1_epi8(-2);
  const auto t0 = Clock::now();
  for (long i = 0; i < kPeakIters; ++i) {
#pragma GCC unroll 16
    for (auto& a : acc) a = _mm512_dpbusd_epi32(a, x, y);
  }
  const double secs = seconds_since(t0);
  __m512i s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_epi32(s, acc[i]);
  sink_si(s);
  return 2.0 * 64 * 16 * static_cast<double>(kPeakIters) / secs;  // 64 products per instruction
}

// Four independent accumulator tiles (16 x 16 int32 or fp32) fed by two A and two B tiles,
// as the int8 GEMM's tile does, minus the loads.
__attribute__((target("amx-tile,amx-int8,amx-bf16"))) double amx_loop(bool bf16) {
  // The kernels' configuration (kept on this thread afterwards, as the kernels expect).
  kernels::detail::amx_configure_tiles();
  alignas(64) static const std::uint8_t operand[16 * 64] = {};
  _tile_zero(0);  // (tile numbers must be constants)
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  constexpr long kIters = kPeakIters / 8;
  const auto t0 = Clock::now();
  if (bf16) {
    for (long i = 0; i < kIters; ++i) {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  } else {
    for (long i = 0; i < kIters; ++i) {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
  }
  const double secs = seconds_since(t0);
  alignas(64) std::int32_t out[256];
  _tile_stored(0, out, 64);
  g_sink += static_cast<std::uint64_t>(out[0]);
  // 16 x 16 outputs, each a sum of 64 int8 (32 bf16) products, per instruction.
  return 2.0 * 4 * 16 * 16 * (bf16 ? 32 : 64) * static_cast<double>(kIters) / secs;
}
double amx_int8_loop() {
  return amx_loop(false);
}
double amx_bf16_loop() {
  return amx_loop(true);
}

// The loop once on one thread, then on `threads` threads at once (the best of three
// tries each, so that a moment of interference elsewhere does not set the peak).
void measure_peak(double (*loop)(), std::size_t threads, double& core, double& all) {
  core = 0;
  for (int t = 0; t < 3; ++t) core = std::max(core, loop());
  all = 0;
  for (int t = 0; t < 3; ++t) {
    std::vector<double> per(threads);
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < threads; ++i) pool.emplace_back([&per, i, loop] { per[i] = loop(); });
    for (auto& th : pool) th.join();
    double sum = 0;
    for (const double p : per) sum += p;
    all = std::max(all, sum);
  }
}

// Runs body(thread index) on `threads` threads started together; returns the wall time of
// the slowest.
double timed_parallel(std::size_t threads, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  std::vector<double> secs(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      const auto t0 = Clock::now();
      body(i);
      secs[i] = seconds_since(t0);
    });
  }
  while (ready.load() != threads) {
  }
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return *std::max_element(secs.begin(), secs.end());
}

double triad_bandwidth(std::size_t threads) {
  constexpr std::size_t kFloats = std::size_t{64} << 20;  // 256 MiB per array
  AlignedBuffer<float> a(kFloats), b(kFloats), c(kFloats);
  const std::size_t chunk = kFloats / threads;
  // First touch by the thread that will use each part (NUMA placement, and pages faulted in
  // before the timed passes).
  timed_parallel(threads, [&](std::size_t t) {
    for (std::size_t i = t * chunk; i < (t + 1) * chunk; ++i) {
      a.data()[i] = 0.0F;
      b.data()[i] = 1.0F;
      c.data()[i] = 2.0F;
    }
  });
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const double secs = timed_parallel(threads, [&](std::size_t t) {
      float* __restrict pa = a.data() + t * chunk;
      const float* __restrict pb = b.data() + t * chunk;
      const float* __restrict pc = c.data() + t * chunk;
      for (std::size_t i = 0; i < chunk; ++i) pa[i] = pb[i] + 0.5F * pc[i];
    });
    best = std::max(best, 3.0 * static_cast<double>(chunk * threads * sizeof(float)) / secs);
  }
  g_sink += static_cast<std::uint64_t>(a.data()[kFloats / 2]);
  return best;
}

__attribute__((target("avx512f"))) std::uint64_t read_all(const std::uint8_t* p, std::size_t bytes) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512()};
  for (std::size_t i = 0; i + 256 <= bytes; i += 256) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      acc[j] = _mm512_xor_si512(acc[j], _mm512_load_si512(p + i + static_cast<std::size_t>(j) * 64));
    }
  }
  const __m512i x = _mm512_xor_si512(_mm512_xor_si512(acc[0], acc[1]), _mm512_xor_si512(acc[2], acc[3]));
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, x);
  return lanes[0];
}

// Each thread reads its share of the buffer over and over (as a dense layer split by
// columns reads its share of the weights); the best pass rate after the first.
double read_bandwidth(std::size_t threads, std::size_t bytes) {
  AlignedBuffer<std::uint8_t> buffer(bytes);
  for (std::size_t i = 0; i < bytes; ++i) buffer.data()[i] = static_cast<std::uint8_t>(i * 7);
  const std::size_t chunk = bytes / threads / 256 * 256;
  double best = 0;
  const auto start = Clock::now();
  for (int pass = 0; pass < 200 && (pass < 6 || seconds_since(start) < 0.3); ++pass) {
    const double secs =
        timed_parallel(threads, [&](std::size_t t) { g_sink += read_all(buffer.data() + t * chunk, chunk); });
    if (pass > 0) best = std::max(best, static_cast<double>(chunk * threads) / secs);
  }
  return best;
}

}  // namespace

double Roofline::compute_peak(const std::string& dtype, bool amx) const {
  if (dtype == "int8" && amx && amx_int8_all > 0) return amx_int8_all;
  if (dtype == "int8" && int8_all > 0) return int8_all;
  if (dtype == "bfloat16" && amx && amx_bf16_all > 0) return amx_bf16_all;
  if (dtype == "bfloat16" && bf16_all > 0) return bf16_all;
  return fp32_all;
}

std::string Roofline::json() const {
  char out[768];
  std::snprintf(out, sizeof out,
                "{\"roofline\": true, \"threads\": %zu, \"fp32_gflops_core\": %.1f, \"fp32_gflops\": %.1f, "
                "\"bf16_gflops_core\": %.1f, \"bf16_gflops\": %.1f, \"int8_gops_core\": %.1f, "
                "\"int8_gops\": %.1f, \"amx_int8_gops_core\": %.1f, \"amx_int8_gops\": %.1f, "
                "\"amx_bf16_gflops_core\": %.1f, \"amx_bf16_gflops\": %.1f, \"dram_triad_gbs\": %.1f, "
                "\"working_set_gbs\": %.1f, "
                "\"working_set_mb\": %.1f}",
                threads, fp32_core * 1e-9, fp32_all * 1e-9, bf16_core * 1e-9, bf16_all * 1e-9,
                int8_core * 1e-9, int8_all * 1e-9, amx_int8_core * 1e-9, amx_int8_all * 1e-9,
                amx_bf16_core * 1e-9, amx_bf16_all * 1e-9, dram_triad * 1e-9, working_set * 1e-9,
                static_cast<double>(working_set_bytes) / 1e6);
  return out;
}

Roofline measure_roofline(std::size_t threads, std::size_t working_set_bytes) {
  Roofline r;
  r.threads = threads == 0 ? 1 : threads;
  const CpuFeatures& cpu = cpu_features();
  if (cpu.avx512) measure_peak(fp32_loop, r.threads, r.fp32_core, r.fp32_all);
  if (cpu.avx512_bf16) measure_peak(bf16_loop, r.threads, r.bf16_core, r.bf16_all);
  if (cpu.avx512_vnni) measure_peak(int8_loop, r.threads, r.int8_core, r.int8_all);
  if (cpu.amx_int8) measure_peak(amx_int8_loop, r.threads, r.amx_int8_core, r.amx_int8_all);
  if (cpu.amx_bf16) measure_peak(amx_bf16_loop, r.threads, r.amx_bf16_core, r.amx_bf16_all);
  r.dram_triad = triad_bandwidth(r.threads);
  r.working_set_bytes = working_set_bytes;
  if (working_set_bytes >= 256 * r.threads) r.working_set = read_bandwidth(r.threads, working_set_bytes);
  return r;
}

double roofline_seconds(const Roofline& r, const std::string& dtype, bool amx, double dense_flops,
                        double float_flops, double bytes, bool* memory_bound) {
  const double peak = r.compute_peak(dtype, amx);
  const double bandwidth = r.working_set > 0 ? r.working_set : r.dram_triad;
  const double compute =
      (peak > 0 ? dense_flops / peak : 0) + (r.fp32_all > 0 ? float_flops / r.fp32_all : 0);
  const double memory = bandwidth > 0 ? bytes / bandwidth : 0;
  if (memory_bound != nullptr) *memory_bound = memory > compute;
  return std::max(compute, memory);
}

}  // namespace warden::bench

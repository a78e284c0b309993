#include "kernels/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace warden::kernels {
namespace {

std::vector<Isa> supported_isas() {
  std::vector<Isa> isas{Isa::Portable};
  if (cpu_features().avx2_fma) isas.push_back(Isa::Avx2);
  if (cpu_features().avx512) isas.push_back(Isa::Avx512);
#if defined(__aarch64__)
  if (cpu_features().neon) isas.push_back(Isa::Neon);
#endif
  return isas;
}

std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float scale = 1.0F) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double activate(double v, Activation act) {
  switch (act) {
    case Activation::None:
      return v;
    case Activation::Gelu:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Activation::Relu:
      return v > 0 ? v : 0;
    case Activation::Tanh:
      return std::tanh(v);
    case Activation::Silu:
      return v / (1.0 + std::exp(-v));
    case Activation::GeluTanh:
      return 0.5 * v *
             (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
  }
  return v;
}

void check_linear(Isa isa, std::size_t m, std::size_t n, std::size_t k, Activation act, bool residual,
                  ThreadPool* pool) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 17 + k));
  const std::size_t lda = k + 3;  // strides wider than the rows, as in packed QKV views
  const std::size_t ldc = n + 5;
  const auto a = random_vector(m * lda, rng);
  const auto w = random_vector(n * k, rng, 0.5F);
  const auto bias = random_vector(n, rng);
  const auto res = random_vector(m * ldc, rng);
  const PackedLinear packed(w, n, k, bias, isa);
  std::vector<float> c(m * ldc, 12345.0F);
  const Epilogue ep{act, residual ? res.data() : nullptr, ldc};
  linear(a.data(), lda, m, packed, c.data(), ldc, ep, pool);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double dot = double(bias[j]);
      double mag = std::fabs(double(bias[j]));
      for (std::size_t kk = 0; kk < k; ++kk) {
        dot += double(a[i * lda + kk]) * double(w[j * k + kk]);
        mag += std::fabs(double(a[i * lda + kk]) * double(w[j * k + kk]));
      }
      double want = activate(dot, act);
      if (residual) want += double(res[i * ldc + j]);
      ASSERT_NEAR(c[i * ldc + j], want, 2e-6 * (mag + 1.0))
          << isa_name(isa) << " m=" << m << " n=" << n << " k=" << k << " at " << i << "," << j;
    }
    for (std::size_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], 12345.0F) << "wrote past n";
  }
}

TEST(Gemm, MatchesADoubleReferenceOnEveryIsaAndEdgeShape) {
  for (const Isa isa : supported_isas()) {
    for (const auto& [m, n, k] :
         std::vector<std::tuple<std::size_t, std::size_t, std::size_t>>{{1, 1, 1},
                                                                        {1, 33, 7},
                                                                        {5, 17, 64},
                                                                        {13, 32, 256},
                                                                        {12, 64, 257},
                                                                        {100, 48, 300},
                                                                        {3, 3, 600},
                                                                        {97, 130, 40}}) {
      check_linear(isa, m, n, k, Activation::None, false, nullptr);
    }
  }
}

TEST(Gemm, FusedEpiloguesMatchOnEveryIsa) {
  ThreadPool pool(2);
  for (const Isa isa : supported_isas()) {
    for (const Activation act : {Activation::None, Activation::Gelu, Activation::Relu, Activation::Tanh,
                                 Activation::Silu, Activation::GeluTanh}) {
      check_linear(isa, 29, 70, 96, act, false, &pool);
      check_linear(isa, 29, 70, 96, act, true, &pool);
    }
  }
}

// Every ISA's packing puts W[j][kk] at panel j / NR, row kk, lane j % NR (the AVX-512
// transposing packer for whole panels, the scalar loop for the rest), with zero lanes past n.
TEST(Gemm, PanelsHoldTheWeightsTransposed) {
  for (const Isa isa : supported_isas()) {
    for (const std::size_t n : {1, 32, 33, 64, 100}) {
      for (const std::size_t k : {1, 15, 16, 17, 384}) {
        std::vector<float> w(n * k);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) + 0.5F;
        const PackedLinear packed(w, n, k, {}, isa);
        const std::size_t nr = packed.panel_width();
        const std::size_t panels = (n + nr - 1) / nr;
        for (std::size_t p = 0; p < panels; ++p) {
          for (std::size_t kk = 0; kk < k; ++kk) {
            for (std::size_t lane = 0; lane < nr; ++lane) {
              const std::size_t j = p * nr + lane;
              const float expected = j < n ? w[j * k + kk] : 0.0F;
              ASSERT_EQ(packed.panels()[p * k * nr + kk * nr + lane], expected)
                  << isa_name(isa) << " n=" << n << " k=" << k << " j=" << j << " kk=" << kk;
            }
          }
        }
      }
    }
  }
}

TEST(Gemm, ThreadedResultEqualsSingleThreadedBitForBit) {
  ThreadPool pool(3);
  std::mt19937 rng(7);
  const std::size_t m = 200, n = 384, k = 384;
  const auto a = random_vector(m * k, rng);
  const auto w = random_vector(n * k, rng);
  const PackedLinear packed(w, n, k, {});
  std::vector<float> c1(m * n), c2(m * n);
  linear(a.data(), k, m, packed, c1.data(), n, {}, nullptr);
  linear(a.data(), k, m, packed, c2.data(), n, {}, &pool);
  EXPECT_EQ(c1, c2);
}

TEST(Gemm, ResidualMayAliasTheOutput) {
  std::mt19937 rng(3);
  const std::size_t m = 20, n = 40, k = 30;
  const auto a = random_vector(m * k, rng);
  const auto w = random_vector(n * k, rng);
  auto c = random_vector(m * n, rng);
  const auto before = c;
  const PackedLinear packed(w, n, k, {});
  linear(a.data(), k, m, packed, c.data(), n, {Activation::None, c.data(), n});
  std::vector<float> plain(m * n);
  linear(a.data(), k, m, packed, plain.data(), n);
  for (std::size_t i = 0; i < m * n; ++i) EXPECT_NEAR(c[i], plain[i] + before[i], 1e-5);
}

TEST(Gemm, GeluIsAccurateOverTheWholeRange) {
  // One input column, weight 1: the output is gelu(a) exactly as the kernel computes it.
  for (const Isa isa : supported_isas()) {
    const std::size_t m = 2001;
    std::vector<float> a(m);
    for (std::size_t i = 0; i < m; ++i) a[i] = -10.0F + 0.01F * static_cast<float>(i);
    const std::vector<float> w{1.0F};
    const PackedLinear packed(w, 1, 1, {}, isa);
    std::vector<float> c(m);
    linear(a.data(), 1, m, packed, c.data(), 1, {Activation::Gelu});
    for (std::size_t i = 0; i < m; ++i) {
      ASSERT_NEAR(c[i], activate(double(a[i]), Activation::Gelu), 1e-6) << isa_name(isa) << " x=" << a[i];
    }
  }
}

}  // namespace
}  // namespace warden::kernels

namespace warden::kernels {
namespace {

// A range of panels is a layer of those columns: the same products, bit for bit, on every ISA.
TEST(Gemm, APanelRangeComputesItsColumnsOnly) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  const std::size_t n = 150, k = 40, m = 9;
  std::vector<float> w(n * k), bias(n), a(m * k);
  for (auto& x : w) x = dist(rng);
  for (auto& x : bias) x = dist(rng);
  for (auto& x : a) x = dist(rng);
  for (const Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512}) {
    if ((isa == Isa::Avx2 && !cpu_features().avx2_fma) || (isa == Isa::Avx512 && !cpu_features().avx512))
      continue;
    const PackedLinear layer(w, n, k, bias, isa);
    std::vector<float> full(m * n);
    linear(a.data(), k, m, layer, full.data(), n);
    const std::size_t nr = layer.panel_width();
    const std::size_t panels = (n + nr - 1) / nr;
    for (std::size_t first = 0; first < panels; ++first) {
      const PackedLinear part = layer.panel_range(first, panels - first);
      EXPECT_EQ(part.n(), n - first * nr);
      std::vector<float> out(m * n, -7.0F);
      linear(a.data(), k, m, part, out.data() + first * nr, n);
      for (std::size_t r = 0; r < m; ++r) {
        for (std::size_t c = 0; c < n; ++c) {
          if (c < first * nr) {
            ASSERT_EQ(out[r * n + c], -7.0F) << "column " << c << " before the range was written";
          } else {
            ASSERT_EQ(out[r * n + c], full[r * n + c]) << isa_name(isa) << " first " << first << " col " << c;
          }
        }
      }
    }
    EXPECT_THROW((void)layer.panel_range(panels, 1), Error);
  }
}

}  // namespace
}  // namespace warden::kernels

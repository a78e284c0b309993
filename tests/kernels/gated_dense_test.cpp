#include "kernels/gated_dense.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/dense.hpp"
#include "kernels/gemm_tile.hpp"

namespace warden::kernels {
namespace {

std::vector<float> normal_vector(std::size_t n, std::mt19937& rng, float stddev) {
  std::normal_distribution<float> dist(0.0F, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<Isa> isas() {
  std::vector<Isa> out{Isa::Portable};
#if defined(__x86_64__)
  if (cpu_features().avx2_fma) out.push_back(Isa::Avx2);
  if (cpu_features().avx512) out.push_back(Isa::Avx512);
#endif
  return out;
}

// The gated layer against the same precision's plain product of the stacked halves, gated in
// double: the products are the same tiles, so only the activation's rounding differs.
TEST(GatedDense, EqualsTheStackedProductGatedForEveryPrecisionAndShape) {
  std::mt19937 rng(3);
  ThreadPool pool(2);
  for (const Isa isa : isas()) {
    for (const Precision precision : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
      for (const Activation act :
           {Activation::Gelu, Activation::Relu, Activation::Silu, Activation::GeluTanh}) {
        for (const auto& [width, k] : {std::pair<std::size_t, std::size_t>{120, 64}, {33, 300}, {544, 96}}) {
          const auto activated = normal_vector(width * k, rng, 0.1F);
          const auto gate = normal_vector(width * k, rng, 0.1F);
          const auto bias_a = normal_vector(width, rng, 0.1F);
          const auto bias_g = normal_vector(width, rng, 0.1F);
          const GatedDense layer =
              GatedDense::make(precision, activated, gate, width, k, bias_a, bias_g, isa);
          std::vector<float> stacked(activated);
          stacked.insert(stacked.end(), gate.begin(), gate.end());
          std::vector<float> stacked_bias(bias_a);
          stacked_bias.insert(stacked_bias.end(), bias_g.begin(), bias_g.end());
          const DenseLayer plain = DenseLayer::make(precision, stacked, 2 * width, k, stacked_bias, isa);
          for (const std::size_t m : {1U, 16U, 97U, 230U}) {
            SCOPED_TRACE(testing::Message()
                         << "isa " << isa_name(isa) << " precision " << precision_name(precision) << " width "
                         << width << " k " << k << " m " << m);
            const auto a = normal_vector(m * k, rng, 1.0F);
            std::vector<float> product(m * 2 * width);
            dense(a.data(), k, m, plain, product.data(), 2 * width, {}, nullptr);
            const std::size_t ldc = width + 5;
            std::vector<float> c(m * ldc, 777.0F);
            gated_dense(a.data(), k, m, layer, act, c.data(), ldc, m > 50 ? &pool : nullptr);
            for (std::size_t r = 0; r < m; ++r) {
              for (std::size_t j = 0; j < width; ++j) {
                const double x = product[r * 2 * width + j];
                const double g = product[r * 2 * width + width + j];
                const double ax =
                    act == Activation::Relu   ? std::max(x, 0.0)
                    : act == Activation::Silu ? x / (1.0 + std::exp(-x))
                    : act == Activation::GeluTanh
                        ? 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
                        : 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
                ASSERT_NEAR(c[r * ldc + j], ax * g, 1e-5 + 1e-5 * std::fabs(ax * g)) << r << "," << j;
              }
              for (std::size_t j = width; j < ldc; ++j)
                ASSERT_EQ(c[r * ldc + j], 777.0F) << "padding written";
            }
          }
        }
      }
    }
  }
}

TEST(GatedDense, ArenaBytesCoverTheLayerAndPrefilledReadsItBack) {
  std::mt19937 rng(4);
  const std::size_t width = 70, k = 40;
  const auto activated = normal_vector(width * k, rng, 0.1F);
  const auto gate = normal_vector(width * k, rng, 0.1F);
  for (const Precision precision : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    Arena arena(GatedDense::arena_bytes(precision, width, k));
    const GatedDense made =
        GatedDense::make(precision, activated, gate, width, k, {}, {}, active_isa(), &arena);
    EXPECT_EQ(made.width(), width);
    EXPECT_EQ(made.k(), k);
    EXPECT_EQ(made.half() % made.product().panel_width(), 0U);
    EXPECT_GE(made.half(), width);
  }
  EXPECT_THROW(GatedDense::make(Precision::Float32, activated, gate, width + 1, k, {}, {}), Error);
}

}  // namespace
}  // namespace warden::kernels

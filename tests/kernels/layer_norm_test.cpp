#include "kernels/layer_norm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"

namespace warden::kernels {
namespace {

TEST(LayerNorm, EveryIsaMatchesADoubleReference) {
  using RowsFn = void (*)(const float*, std::size_t, float*, std::size_t, std::size_t, std::size_t,
                          const float*, const float*, float);
  std::vector<RowsFn> fns{detail::layer_norm_rows_portable};
#if defined(__x86_64__)
  if (cpu_features().avx2_fma) fns.push_back(detail::layer_norm_rows_avx2);
  if (cpu_features().avx512) fns.push_back(detail::layer_norm_rows_avx512);
#endif
#if defined(__aarch64__)
  if (cpu_features().neon) fns.push_back(detail::layer_norm_rows_neon);
#endif
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(3.0F, 2.0F);  // a large mean, as residual streams have
  for (const RowsFn fn : fns) {
    for (const std::size_t cols : {1U, 15U, 16U, 33U, 384U, 768U}) {
      const std::size_t rows = 5;
      std::vector<float> x(rows * cols), g(cols), b(cols), y(rows * cols);
      for (auto& v : x) v = dist(rng);
      for (auto& v : g) v = dist(rng);
      for (auto& v : b) v = dist(rng);
      fn(x.data(), cols, y.data(), cols, rows, cols, g.data(), b.data(), 1e-12F);
      for (std::size_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < cols; ++j) mean += double(x[r * cols + j]);
        mean /= double(cols);
        for (std::size_t j = 0; j < cols; ++j) var += std::pow(double(x[r * cols + j]) - mean, 2);
        var /= double(cols);
        for (std::size_t j = 0; j < cols; ++j) {
          const double want =
              (double(x[r * cols + j]) - mean) / std::sqrt(var + 1e-12) * double(g[j]) + double(b[j]);
          ASSERT_NEAR(y[r * cols + j], want, 1e-5 * (1 + std::fabs(want))) << cols;
        }
      }
    }
  }
}

TEST(LayerNorm, WorksInPlaceThroughTheDispatcher) {
  std::vector<float> x{1, 2, 3, 4, 10, 10, 10, 10};
  const std::vector<float> g(4, 1.0F), b(4, 0.5F);
  layer_norm(x.data(), 4, x.data(), 4, 2, 4, g.data(), b.data(), 1e-5F);
  EXPECT_NEAR(x[0], -1.3416 + 0.5, 1e-3);
  EXPECT_NEAR(x[3], 1.3416 + 0.5, 1e-3);
  for (int j = 4; j < 8; ++j) EXPECT_NEAR(x[j], 0.5, 1e-6);  // constant row: zero variance
}

}  // namespace
}  // namespace warden::kernels

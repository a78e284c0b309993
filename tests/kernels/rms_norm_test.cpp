#include "kernels/rms_norm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/thread_pool.hpp"

namespace warden::kernels {
namespace {

// x / sqrt(mean(x²) + eps) · gamma in double.
std::vector<double> reference(const float* x, std::size_t n, const float* gamma, double eps) {
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j) sum += double(x[j]) * double(x[j]);
  const double inv = 1.0 / std::sqrt(sum / double(n) + eps);
  std::vector<double> out(n);
  for (std::size_t j = 0; j < n; ++j) out[j] = double(gamma[j]) * double(x[j]) * inv;
  return out;
}

TEST(RmsNorm, RowsMatchADoubleReferenceInPlaceOrNot) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.5F, 2.0F);
  ThreadPool pool(2);
  for (const std::size_t cols : {1U, 7U, 64U, 1024U}) {
    const std::size_t rows = 131;
    const std::size_t ld = cols + 3;
    std::vector<float> x(rows * ld), gamma(cols);
    for (auto& v : x) v = dist(rng);
    for (auto& g : gamma) g = dist(rng);
    std::vector<float> out(rows * cols);
    rms_norm(x.data(), ld, out.data(), cols, rows, cols, gamma.data(), 1e-6F, &pool);
    std::vector<float> in_place(x);
    rms_norm(in_place.data(), ld, in_place.data(), ld, rows, cols, gamma.data(), 1e-6F);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto want = reference(x.data() + r * ld, cols, gamma.data(), 1e-6);
      for (std::size_t j = 0; j < cols; ++j) {
        ASSERT_NEAR(out[r * cols + j], want[j], 1e-5 * (1.0 + std::fabs(want[j]))) << cols << " " << r;
        ASSERT_EQ(in_place[r * ld + j], out[r * cols + j]);
      }
    }
  }
}

TEST(RmsNorm, EachHeadIsNormalisedAloneAndTheRestOfTheRowIsLeft) {
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.0F, 3.0F);
  const std::size_t rows = 70, heads = 3, head_dim = 16, ld = 5 * head_dim;
  std::vector<float> x(rows * ld), gamma(head_dim);
  for (auto& v : x) v = dist(rng);
  for (auto& g : gamma) g = dist(rng);
  std::vector<float> got(x);
  ThreadPool pool(2);
  rms_norm_heads(got.data(), ld, rows, heads, head_dim, gamma.data(), 1e-6F, &pool);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t h = 0; h < 5; ++h) {
      const float* in = x.data() + r * ld + h * head_dim;
      const auto want = reference(in, head_dim, gamma.data(), 1e-6);
      for (std::size_t j = 0; j < head_dim; ++j) {
        const float g = got[r * ld + h * head_dim + j];
        if (h < heads) {
          ASSERT_NEAR(g, want[j], 1e-5 * (1.0 + std::fabs(want[j])));
        } else {
          ASSERT_EQ(g, in[j]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace warden::kernels

#include "kernels/row_projection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"

namespace warden::kernels {
namespace {

using ProjectFn = void (*)(const float*, std::size_t, std::size_t, std::size_t, const float*, std::size_t,
                           float*, std::size_t);

std::vector<std::pair<const char*, ProjectFn>> implementations() {
  std::vector<std::pair<const char*, ProjectFn>> out{{"portable", detail::project_rows_portable},
                                                     {"active", project_rows}};
#if defined(__x86_64__)
  if (cpu_features().avx2_fma) out.emplace_back("avx2", detail::project_rows_avx2);
  if (cpu_features().avx512) out.emplace_back("avx512", detail::project_rows_avx512);
#endif
  return out;
}

// Each implementation against the dot products in double, over widths that leave every vector
// tail (k not a multiple of 8 or 16), vector counts past one group of four, and strided rows.
TEST(RowProjection, EqualsTheDotProductsForEveryWidthAndCount) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  for (const auto& [name, fn] : implementations()) {
    for (const std::size_t k : {1U, 7U, 16U, 33U, 1024U}) {
      for (const std::size_t r : {1U, 4U, 5U, 8U}) {
        SCOPED_TRACE(std::string(name) + " k " + std::to_string(k) + " r " + std::to_string(r));
        const std::size_t rows = 3, ldx = k + 3, ldo = r + 2;
        std::vector<float> x(rows * ldx), w(r * k), out(rows * ldo, -7.0F);
        for (auto& v : x) v = dist(rng);
        for (auto& v : w) v = dist(rng);
        fn(x.data(), ldx, rows, k, w.data(), r, out.data(), ldo);
        for (std::size_t i = 0; i < rows; ++i) {
          for (std::size_t j = 0; j < r; ++j) {
            double want = 0, scale = 0;
            for (std::size_t t = 0; t < k; ++t) {
              want += double(x[i * ldx + t]) * double(w[j * k + t]);
              scale += std::fabs(double(x[i * ldx + t]) * double(w[j * k + t]));
            }
            EXPECT_NEAR(double(out[i * ldo + j]), want, 1e-6 * scale + 1e-6) << i << "," << j;
          }
          for (std::size_t j = r; j < ldo; ++j) EXPECT_EQ(out[i * ldo + j], -7.0F) << "wrote past r";
        }
      }
    }
  }
}

}  // namespace
}  // namespace warden::kernels

// Rotary embeddings against a float64 statement of the same rotation: both pair layouts,
// positions restarting in each packed sequence, one table per sequence, values beyond the
// rotated dims and the V columns untouched.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/thread_pool.hpp"
#include "kernels/rotary.hpp"

namespace warden::kernels {
namespace {

TEST(Rotary, InverseFrequenciesFollowTheBaseAndDims) {
  const auto inv = rotary_inv_freq(10000.0, 64);
  ASSERT_EQ(inv.size(), 32U);
  EXPECT_FLOAT_EQ(inv[0], 1.0F);
  for (std::size_t i = 0; i < inv.size(); ++i) {
    EXPECT_NEAR(inv[i], 1.0 / std::pow(10000.0, 2.0 * double(i) / 64.0), 1e-6 * double(inv[i]));
  }
}

TEST(Rotary, RotatesQueriesAndKeysByPositionInEachSequence) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  ThreadPool pool(2);
  const std::size_t heads = 3, head_dim = 16, dims = 12, ld = 3 * heads * head_dim + 4;
  const std::vector<std::size_t> offsets{0, 5, 5 + 130, 5 + 130 + 1};
  const std::size_t tokens = offsets.back();
  const auto inv_a = rotary_inv_freq(1000.0, dims);
  const auto inv_b = rotary_inv_freq(160000.0, dims);  // another base for the long sequence
  const RotaryTable a = RotaryTable::make(inv_a, 130);
  const RotaryTable b = RotaryTable::make(inv_b, 130);
  const RotaryTable* tables[] = {&a, &b, &a};
  for (const bool interleaved : {false, true}) {
    std::vector<float> x(tokens * ld);
    for (float& v : x) v = normal(rng);
    std::vector<float> got(x);
    apply_rotary(got.data(), ld, offsets, 2 * heads, head_dim, tables, interleaved, &pool);
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
      const auto& inv = s == 1 ? inv_b : inv_a;
      for (std::size_t t = offsets[s]; t < offsets[s + 1]; ++t) {
        const double pos = double(t - offsets[s]);
        for (std::size_t col = 0; col < ld; ++col) {
          const std::size_t head = col / head_dim, d = col % head_dim;
          double want = x[t * ld + col];
          if (head < 2 * heads && d < dims) {
            const std::size_t i = interleaved ? d / 2 : d % (dims / 2);
            const bool first = interleaved ? d % 2 == 0 : d < dims / 2;
            const std::size_t partner =
                interleaved ? (first ? col + 1 : col - 1) : (first ? col + dims / 2 : col - dims / 2);
            const double angle = double(float(pos) * inv[i]);
            const double other = x[t * ld + partner];
            want = first ? want * std::cos(angle) - other * std::sin(angle)
                         : want * std::cos(angle) + other * std::sin(angle);
          }
          ASSERT_NEAR(got[t * ld + col], want, 2e-5 * (1.0 + std::fabs(want)))
              << "interleaved " << interleaved << " token " << t << " col " << col;
        }
      }
    }
  }
}

}  // namespace
}  // namespace warden::kernels

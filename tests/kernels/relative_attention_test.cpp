// DeBERTa's disentangled attention against a float64 evaluation of its definition, over
// packed sequences of several lengths, with c2p, p2c, both and neither; with neither it is
// plain attention.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm.hpp"
#include "kernels/relative_attention.hpp"

namespace warden::kernels {
namespace {

constexpr std::size_t kHeads = 3;
constexpr std::size_t kDim = 8;
constexpr std::size_t kCols = kHeads * kDim;
constexpr std::size_t kSpan = 4;  // table rows: 2 * kSpan

// rows for distances -max..max: a bucketing that saturates (as DeBERTa's does) at ±(span-1).
std::vector<std::int32_t> rows_for(std::size_t max_distance) {
  std::vector<std::int32_t> rows;
  for (std::int64_t r = -static_cast<std::int64_t>(max_distance);
       r <= static_cast<std::int64_t>(max_distance); ++r) {
    const std::int64_t b = r < -3 ? -3 + (r + 3) / 4 : (r > 3 ? 3 + (r - 3) / 4 : r);
    rows.push_back(static_cast<std::int32_t>(std::clamp<std::int64_t>(b + kSpan, 0, 2 * kSpan - 1)));
  }
  return rows;
}

std::vector<double> reference(const std::vector<float>& qkv, const std::vector<std::size_t>& offsets,
                              const float* kr, const float* qr, const std::vector<std::int32_t>& rows,
                              std::size_t max_distance, double scale) {
  std::vector<double> out(offsets.back() * kCols, 0.0);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t b = offsets[s], n = offsets[s + 1] - b;
    for (std::size_t h = 0; h < kHeads; ++h) {
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<double> sc(n);
        double mx = -1e300;
        for (std::size_t j = 0; j < n; ++j) {
          const auto r = static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j);
          const std::size_t row = static_cast<std::size_t>(
              rows[static_cast<std::size_t>(r + static_cast<std::int64_t>(max_distance))]);
          double v = 0;
          for (std::size_t d = 0; d < kDim; ++d) {
            const double qd = qkv[(b + i) * 3 * kCols + h * kDim + d];
            const double kd = qkv[(b + j) * 3 * kCols + kCols + h * kDim + d];
            v += qd * kd;
            if (kr != nullptr) v += qd * double(kr[row * kCols + h * kDim + d]);
            if (qr != nullptr) v += kd * double(qr[row * kCols + h * kDim + d]);
          }
          sc[j] = v * scale;
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (auto& x : sc) sum += (x = std::exp(x - mx));
        for (std::size_t j = 0; j < n; ++j) {
          for (std::size_t d = 0; d < kDim; ++d) {
            out[(b + i) * kCols + h * kDim + d] +=
                sc[j] / sum * double(qkv[(b + j) * 3 * kCols + 2 * kCols + h * kDim + d]);
          }
        }
      }
    }
  }
  return out;
}

TEST(RelativeAttention, MatchesItsDefinitionWithC2pP2cBothAndNeither) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0F, 1.0F);
  const std::vector<std::size_t> offsets{0, 1, 8, 25, 27, 60};
  std::vector<float> qkv(offsets.back() * 3 * kCols);
  for (auto& x : qkv) x = normal(rng);
  std::vector<float> kr(2 * kSpan * kCols), qr(2 * kSpan * kCols);
  for (auto& x : kr) x = normal(rng);
  for (auto& x : qr) x = normal(rng);
  // Each head's slice of the tables, packed as the kernel takes them.
  std::vector<PackedLinear> kr_heads, qr_heads;
  for (std::size_t h = 0; h < kHeads; ++h) {
    std::vector<float> ks(2 * kSpan * kDim), qs(2 * kSpan * kDim);
    for (std::size_t r = 0; r < 2 * kSpan; ++r) {
      for (std::size_t d = 0; d < kDim; ++d) {
        ks[r * kDim + d] = kr[r * kCols + h * kDim + d];
        qs[r * kDim + d] = qr[r * kCols + h * kDim + d];
      }
    }
    kr_heads.emplace_back(ks, 2 * kSpan, kDim, std::span<const float>());
    qr_heads.emplace_back(qs, 2 * kSpan, kDim, std::span<const float>());
  }
  const std::size_t max_distance = 40;
  const auto rows = rows_for(max_distance);
  const float scale = 1.0F / std::sqrt(3.0F * kDim);
  ThreadPool pool(2);
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    RelativePositions rel;
    if ((variant & 1) != 0) rel.pos_key = kr_heads;
    if ((variant & 2) != 0) rel.pos_query = qr_heads;
    rel.rows = rows;
    rel.max_distance = max_distance;
    std::vector<float> got(offsets.back() * kCols);
    relative_attention(qkv.data(), 3 * kCols, offsets, {kHeads, kDim, scale}, rel, got.data(), kCols, &pool);
    const auto want = reference(qkv, offsets, (variant & 1) != 0 ? kr.data() : nullptr,
                                (variant & 2) != 0 ? qr.data() : nullptr, rows, max_distance, scale);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5) << i;
    if (variant == 0) {
      std::vector<float> plain(got.size());
      attention(qkv.data(), 3 * kCols, offsets, {kHeads, kDim, scale}, plain.data(), kCols, &pool);
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], plain[i], 2e-6) << i;
    }
  }
  // A sequence longer than the rows cover is refused, not read out of bounds.
  RelativePositions short_rows;
  const auto few = rows_for(4);
  short_rows.rows = few;
  short_rows.max_distance = 4;
  std::vector<float> out(offsets.back() * kCols);
  EXPECT_THROW(relative_attention(qkv.data(), 3 * kCols, offsets, {kHeads, kDim, scale}, short_rows,
                                  out.data(), kCols),
               Error);
}

}  // namespace
}  // namespace warden::kernels

#include "model/heads/pooling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace warden::model {
namespace {

// Two sequences of 2 and 3 tokens, 2-d hidden states.
const std::vector<float> kHidden{1, 2, 3, 4, /* seq 1 */ -1, 0, 5, -6, 2, 2};
const std::vector<std::size_t> kOffsets{0, 2, 5};

std::vector<float> pooled(metadata::PoolingMode mode, std::vector<std::size_t> skip = {}) {
  std::vector<float> out(4);
  heads::pool(kHidden, 2, kOffsets, mode, out, skip);
  return out;
}

TEST(Pooling, EveryModeOverPackedSequences) {
  EXPECT_EQ(pooled(metadata::PoolingMode::Cls), (std::vector<float>{1, 2, -1, 0}));
  EXPECT_EQ(pooled(metadata::PoolingMode::LastToken), (std::vector<float>{3, 4, 2, 2}));
  EXPECT_EQ(pooled(metadata::PoolingMode::Mean), (std::vector<float>{2, 3, 2, -4.0F / 3}));
  EXPECT_EQ(pooled(metadata::PoolingMode::Max), (std::vector<float>{3, 4, 5, 2}));
}

TEST(Pooling, PromptTokensCanBeLeftOut) {
  EXPECT_EQ(pooled(metadata::PoolingMode::Mean, {1, 2}), (std::vector<float>{3, 4, 2, 2}));
  // A prompt as long as the sequence leaves nothing: pool everything rather than nothing.
  EXPECT_EQ(pooled(metadata::PoolingMode::Mean, {2, 0}), pooled(metadata::PoolingMode::Mean));
}

TEST(Pooling, NormalizeMatchesTorchIncludingZeroVectors) {
  std::vector<float> v{3, 4, 0, 0};
  l2_normalize(v, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6F);
  EXPECT_FLOAT_EQ(v[1], 0.8F);
  EXPECT_EQ(v[2], 0.0F);  // F.normalize's eps: a zero vector stays zero, no NaN
  EXPECT_EQ(v[3], 0.0F);
}

TEST(Pooling, MatryoshkaTruncationThenRenormalisation) {
  std::vector<float> v{3, 4, 12, 100, /* row 1 */ 0, 5, 0, 7};
  heads::truncate_rows(v, 4, 2);
  v.resize(4);
  EXPECT_EQ(v, (std::vector<float>{3, 4, 0, 5}));
  l2_normalize(v, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6F);
  EXPECT_FLOAT_EQ(v[3], 1.0F);
}

}  // namespace
}  // namespace warden::model

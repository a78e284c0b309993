// DeBERTa-v2's relative-position buckets against HF transformers' own arithmetic, run in
// torch by tools/golden/deberta_buckets.py for every sequence length up to each
// configuration's maximum (tests/data/deberta-buckets.json): every distance, no
// bucket off by one at the log boundary.

#include <gtest/gtest.h>

#include <simdjson.h>

#include <cstdint>
#include <string>

#include "core/file.hpp"
#include "model/engine/relative_positions.hpp"

namespace warden::model {
namespace {

TEST(RelativePositions, BucketsEqualUpstreamForEveryDistanceOfEveryLength) {
  const std::string json = read_file(std::string(WARDEN_TEST_DATA) + "/deberta-buckets.json");
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(json);
  std::size_t tables = 0;
  for (const simdjson::dom::element table : root["tables"].get_array()) {
    const std::int64_t buckets = table["position_buckets"].get_int64();
    const std::int64_t max_position = table["max_position"].get_int64();
    std::int64_t r = table["first_r"].get_int64();
    std::size_t checked = 0;
    for (const simdjson::dom::element want : table["buckets"].get_array()) {
      ASSERT_EQ(engine::relative_bucket(r, buckets, max_position), want.get_int64().value())
          << "r = " << r << ", position_buckets " << buckets << ", max_position " << max_position;
      ++r;
      ++checked;
    }
    EXPECT_EQ(checked, static_cast<std::size_t>(2 * max_position - 1));
    ++tables;
  }
  EXPECT_EQ(tables, 4U);
  // The boundary the model notes single out: |r| = 511 of 512 positions with 64 buckets.
  EXPECT_EQ(engine::relative_bucket(511, 64, 512), 63);
  EXPECT_EQ(engine::relative_bucket(-511, 64, 512), -63);
}

TEST(RelativePositions, RowsAreTheBucketShiftedBySpanAndClamped) {
  const auto rows = engine::relative_rows(600, 256, 256, 512);
  EXPECT_EQ(rows[600], 256);        // r = 0
  EXPECT_EQ(rows[601], 257);        // r = 1
  EXPECT_EQ(rows[599], 255);        // r = -1
  EXPECT_EQ(rows[600 + 511], 511);  // the last bucket
  EXPECT_EQ(rows[600 + 600], 511);  // past the maximum: clamped (HF does not clamp r first)
  EXPECT_EQ(rows[0], 0);
  // Without buckets the distance itself, clamped to the table.
  const auto plain = engine::relative_rows(10, 4, -1, 512);
  EXPECT_EQ(plain[10], 4);
  EXPECT_EQ(plain[20], 7);
  EXPECT_EQ(plain[0], 0);
}

// MPNet's buckets against HF's arithmetic run in torch (tools/golden/mpnet_buckets.py, every
// relative position of every length up to 1,026 tokens; tests/data/mpnet-buckets.json).
TEST(RelativePositions, MpnetBucketsEqualUpstreamForEveryRelativePosition) {
  const std::string json = read_file(std::string(WARDEN_TEST_DATA) + "/mpnet-buckets.json");
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(json);
  std::int64_t r = root["first_relative_position"].get_int64();
  std::size_t checked = 0;
  for (const simdjson::dom::element want : root["buckets"].get_array()) {
    ASSERT_EQ(engine::mpnet_relative_bucket(r), want.get_int64().value()) << "j - i = " << r;
    ++r;
    ++checked;
  }
  EXPECT_EQ(checked, 2051U);
  // The log boundaries, where float32 rounding decides: |n| = 16, 32, 64 and the cap at 128.
  EXPECT_EQ(engine::mpnet_relative_bucket(-16), 10);
  EXPECT_EQ(engine::mpnet_relative_bucket(16), 26);
  EXPECT_EQ(engine::mpnet_relative_bucket(-64), 14);
  EXPECT_EQ(engine::mpnet_relative_bucket(-100000), 15);
  EXPECT_EQ(engine::mpnet_relative_bucket(100000), 31);
}

}  // namespace
}  // namespace warden::model

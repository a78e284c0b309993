#include "bulk/vector_writer.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "bulk/score_writer.hpp"
#include "core/file.hpp"

namespace warden::bulk {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("warden-bulk-writer-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

Record record(std::string id) {
  Record r;
  r.id = std::move(id);
  return r;
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_half(0.0F), 0x0000);
  EXPECT_EQ(float_to_half(-0.0F), 0x8000);
  EXPECT_EQ(float_to_half(1.0F), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0F), 0xC000);
  EXPECT_EQ(float_to_half(0.1F), 0x2E66);
  EXPECT_EQ(float_to_half(65504.0F), 0x7BFF);  // the largest half
  // Halfway between 1 and the next half (1 + 2^-10): ties go to the even mantissa.
  EXPECT_EQ(float_to_half(1.0F + std::ldexp(1.0F, -11)), 0x3C00);
  EXPECT_EQ(float_to_half(1.0F + 3 * std::ldexp(1.0F, -11)), 0x3C02);
  EXPECT_EQ(float_to_half(1.0F + std::ldexp(1.0F, -11) + std::ldexp(1.0F, -20)), 0x3C01);
}

TEST(Float16, OverflowsToInfinity) {
  EXPECT_EQ(float_to_half(65519.0F), 0x7BFF);  // below the halfway point to 65536
  EXPECT_EQ(float_to_half(65520.0F), 0x7C00);  // halfway: rounds to even, which is infinity
  EXPECT_EQ(float_to_half(1e10F), 0x7C00);
  EXPECT_EQ(float_to_half(-1e10F), 0xFC00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  const std::uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x3FF, 0);
}

TEST(Float16, KeepsSubnormals) {
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -24)), 0x0001);     // the smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -25)), 0x0000);     // half of it: ties to even (0)
  EXPECT_EQ(float_to_half(std::ldexp(3.0F, -26)), 0x0001);     // 0.75 of it
  EXPECT_EQ(float_to_half(std::ldexp(3.0F, -25)), 0x0002);     // 1.5: ties to even (2)
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -14)), 0x0400);     // the smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1023.0F, -24)), 0x03FF);  // the largest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -30)), 0x0000);
  EXPECT_EQ(float_to_half(-std::ldexp(1.0F, -24)), 0x8001);
}

#if defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__aarch64__))
TEST(Float16, MatchesTheCompilersConversion) {
  // Every float whose low 13 mantissa bits sweep the rounding cases, over the whole range.
  for (std::uint32_t hi = 0; hi < (1U << 19); hi += 7) {
    for (const std::uint32_t lo : {0U, 1U, 0xFFFU, 0x1000U, 0x1001U, 0x1FFFU}) {
      const float f = std::bit_cast<float>((hi << 13) | lo);
      if (std::isnan(f)) continue;
      const auto expected = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
      ASSERT_EQ(float_to_half(f), expected) << std::hexfloat << f;
    }
  }
}
#endif

TEST(NpyHeader, IsFixedSizeAndValid) {
  const std::string h = npy_header(12345, 384);
  ASSERT_EQ(h.size(), kNpyHeaderBytes);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t len =
      static_cast<unsigned char>(h[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(h[9])) << 8);
  EXPECT_EQ(len + 10, kNpyHeaderBytes);
  EXPECT_EQ(kNpyHeaderBytes % 64, 0U);
  EXPECT_NE(h.find("'shape': (12345, 384), }"), std::string::npos);
  EXPECT_EQ(h.back(), '\n');
  // The largest row count still fits.
  EXPECT_EQ(npy_header(std::numeric_limits<std::uint64_t>::max(), 65536).size(), kNpyHeaderBytes);
}

TEST(VectorSink, NpyHeaderFollowsTheRowsAtEverySync) {
  const TempDir dir;
  SinkOptions o;
  o.path = dir.path() / "out.npy";
  o.format = OutputFormat::Npy;
  o.dim = 2;
  auto sink = make_vector_sink(o);
  const float a[2] = {1.0F, 2.0F}, b[2] = {3.0F, -4.5F};
  sink->write(record("\"x\""), a);
  sink->sync();
  std::string bytes = read_file(o.path);
  ASSERT_EQ(bytes.size(), kNpyHeaderBytes + 8);
  EXPECT_NE(bytes.find("'shape': (1, 2)"), std::string::npos);
  sink->write(record("7"), b);
  sink->finish();
  bytes = read_file(o.path);
  ASSERT_EQ(bytes.size(), kNpyHeaderBytes + 16);
  EXPECT_NE(bytes.find("'shape': (2, 2)"), std::string::npos);
  float values[4];
  std::memcpy(values, bytes.data() + kNpyHeaderBytes, sizeof values);
  EXPECT_EQ(values[3], -4.5F);
  EXPECT_EQ(read_file(ids_path(o.path)), "\"x\"\n7\n");
  EXPECT_EQ(sink_files(o).size(), 2U);
}

TEST(VectorSink, RawFloat16HasASidecar) {
  const TempDir dir;
  SinkOptions o;
  o.path = dir.path() / "out.f16";
  o.format = OutputFormat::Float16;
  o.dim = 3;
  o.model = "m";
  auto sink = make_vector_sink(o);
  const float a[3] = {1.0F, -2.0F, 65504.0F};
  sink->write(record("0"), a);
  sink->finish();
  const std::string bytes = read_file(o.path);
  ASSERT_EQ(bytes.size(), 6U);
  EXPECT_EQ(bytes, std::string("\x00\x3C\x00\xC0\xFF\x7B", 6));
  simdjson::dom::parser parser;
  const simdjson::padded_string text(read_file(sidecar_path(o.path)));
  simdjson::dom::element doc = parser.parse(text);
  EXPECT_EQ(std::string_view(doc["dtype"]), "float16");
  EXPECT_EQ(std::uint64_t(doc["dim"]), 3U);
  EXPECT_EQ(std::uint64_t(doc["rows"]), 1U);
  EXPECT_EQ(std::string_view(doc["byte_order"]), "little");
  EXPECT_EQ(std::string_view(doc["model"]), "m");
  EXPECT_EQ(std::string_view(doc["ids"]), "out.f16.ids.jsonl");
}

TEST(VectorSink, JsonlPrintsFloatsRoundTrip) {
  const TempDir dir;
  SinkOptions o;
  o.path = dir.path() / "out.jsonl";
  o.dim = 2;
  auto sink = make_vector_sink(o);
  const float a[2] = {0.1F, 1.0F / 3.0F};
  sink->write(record("\"k\""), a);
  sink->finish();
  const std::string text = read_file(o.path);
  EXPECT_EQ(text, "{\"id\":\"k\",\"embedding\":[0.1,0.33333334]}\n");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(text);
  EXPECT_EQ(static_cast<float>(double(doc["embedding"].at(1))), 1.0F / 3.0F);
}

TEST(ScoreSink, OneLinePerPair) {
  const TempDir dir;
  ScoreSinkOptions o;
  o.path = dir.path() / "scores.jsonl";
  o.query_ids = {"\"q1\"", "2"};
  auto sink = make_score_sink(o);
  const float scores[2] = {0.5F, 0.25F};
  sink->write(record("\"p\""), scores);
  sink->finish();
  EXPECT_EQ(
      read_file(o.path),
      "{\"id\":\"p\",\"query_id\":\"q1\",\"score\":0.5}\n{\"id\":\"p\",\"query_id\":2,\"score\":0.25}\n");
}

}  // namespace
}  // namespace warden::bulk

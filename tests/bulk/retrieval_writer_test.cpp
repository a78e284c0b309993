// The retrieval sinks (bulk/retrieval_writer.hpp): sparse vectors as JSON lines of indices and
// values; token vectors as one .npy of rows, a CSR offsets .npy and the ids; a multi-vector job
// resumed from files cut at a checkpoint writes the same bytes as one that never stopped.

#include "bulk/retrieval_writer.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"

namespace warden::bulk {
namespace {

namespace fs = std::filesystem;

class RetrievalWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warden-retrieval-writer-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Record record(std::string id) {
  Record r;
  r.id = std::move(id);
  return r;
}

embed::RetrievalVectors tokens(std::size_t rows, float base) {
  embed::RetrievalVectors v;
  v.multi = Embeddings(rows, 3);
  for (std::size_t i = 0; i < v.multi.values().size(); ++i)
    v.multi.values()[i] = base + static_cast<float>(i);
  return v;
}

std::vector<std::int64_t> offsets_of(const std::string& npy) {
  std::vector<std::int64_t> out((npy.size() - kNpyHeaderBytes) / 8);
  std::memcpy(out.data(), npy.data() + kNpyHeaderBytes, out.size() * 8);
  return out;
}

TEST_F(RetrievalWriter, SparseVectorsAreJsonLinesOfIndicesAndValues) {
  SinkOptions o;
  o.path = dir_ / "out.jsonl";
  auto sink = make_sparse_sink(o);
  embed::RetrievalVectors a;
  a.sparse = {{3, 17}, {0.5F, 2.0F}};
  sink->write_outputs(record("\"a\""), a);
  sink->write_outputs(record("7"), embed::RetrievalVectors{});
  sink->finish();
  EXPECT_EQ(
      read_file(o.path),
      "{\"id\":\"a\",\"indices\":[3,17],\"values\":[0.5,2.0]}\n{\"id\":7,\"indices\":[],\"values\":[]}\n");
  EXPECT_THROW(sink->write(record("1"), std::vector<float>{1.0F}), Error);
}

TEST_F(RetrievalWriter, TokenVectorsAreRowsWithCsrOffsetsAndIds) {
  SinkOptions o;
  o.path = dir_ / "out.npy";
  o.dim = 3;
  auto sink = make_multi_vector_sink(o);
  sink->write_outputs(record("\"a\""), tokens(2, 0));
  sink->write_outputs(record("\"b\""), tokens(0, 0));
  sink->write_outputs(record("\"c\""), tokens(3, 100));
  sink->finish();
  const std::string data = read_file(o.path);
  EXPECT_EQ(data.substr(0, kNpyHeaderBytes), npy_header(5, 3));
  ASSERT_EQ(data.size(), kNpyHeaderBytes + 5 * 3 * 4);
  float last = 0;
  std::memcpy(&last, data.data() + data.size() - 4, 4);
  EXPECT_EQ(last, 108.0F);
  const std::string offsets = read_file(offsets_path(o.path));
  EXPECT_EQ(offsets.substr(0, kNpyHeaderBytes), npy_header_int64(4));
  EXPECT_EQ(offsets_of(offsets), (std::vector<std::int64_t>{0, 2, 2, 5}));
  EXPECT_EQ(read_file(ids_path(o.path)), "\"a\"\n\"b\"\n\"c\"\n");
  EXPECT_EQ(offsets_path(o.path), dir_ / "out.offsets.npy");
}

TEST_F(RetrievalWriter, AResumedMultiVectorJobWritesTheSameBytes) {
  SinkOptions whole;
  whole.path = dir_ / "whole.npy";
  whole.dim = 3;
  {
    auto sink = make_multi_vector_sink(whole);
    for (int i = 0; i < 4; ++i) sink->write_outputs(record(std::to_string(i)), tokens(1 + i, float(i)));
    sink->finish();
  }
  SinkOptions part = whole;
  part.path = dir_ / "part.npy";
  std::vector<std::uint64_t> lengths;
  {
    auto sink = make_multi_vector_sink(part);
    for (int i = 0; i < 2; ++i) sink->write_outputs(record(std::to_string(i)), tokens(1 + i, float(i)));
    sink->sync();
    lengths = sink->lengths();
    sink->write_outputs(record("2"), tokens(3, 2));  // after the checkpoint: lost, cut back below
    sink->finish();
  }
  const auto files = multi_vector_files(part.path);
  ASSERT_EQ(files.size(), lengths.size());
  for (std::size_t f = 0; f < files.size(); ++f) fs::resize_file(files[f], lengths[f]);
  part.resume = true;
  part.rows = 2;
  {
    auto sink = make_multi_vector_sink(part);
    for (int i = 2; i < 4; ++i) sink->write_outputs(record(std::to_string(i)), tokens(1 + i, float(i)));
    sink->finish();
  }
  for (std::size_t f = 0; f < files.size(); ++f) {
    EXPECT_TRUE(read_file(files[f]) == read_file(multi_vector_files(whole.path)[f])) << files[f];
  }
  // Offsets that do not match the records a checkpoint counts are a corrupt output.
  part.rows = 3;
  EXPECT_THROW(make_multi_vector_sink(part), Error);
}

}  // namespace
}  // namespace warden::bulk

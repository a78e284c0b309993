#include "model/formats/weights.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/temp_dir.hpp"

namespace warden {
namespace {

const std::vector<float> kFour{1, 2, 3, 4};

void write_shard(const std::filesystem::path& path, const std::vector<std::string>& names) {
  std::vector<model::formats::TensorToWrite> tensors;
  for (const auto& n : names)
    tensors.push_back({n, model::formats::Dtype::F32, {2, 2}, std::as_bytes(std::span(kFour))});
  model::formats::write_safetensors(path, tensors, {{"format", "pt"}});
}

void write_index(const std::filesystem::path& path, const std::string& weight_map) {
  write_file_atomic(path, R"({"metadata":{"total_size":32},"weight_map":)" + weight_map + "}");
}

std::string open_error(const std::filesystem::path& index, ErrorKind kind = ErrorKind::CorruptFile) {
  try {
    (void)model::formats::ModelWeights::open_index(index);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "opened without error";
  return {};
}

TEST(ModelWeights, SingleFileAndRequire) {
  const testing::TempDir dir;
  write_shard(dir / "model.safetensors", {"a", "b"});
  const auto w = model::formats::ModelWeights::open_dir(dir.path());
  EXPECT_EQ(w.size(), 2U);
  EXPECT_EQ(w.names(), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(w.require("a", {2, 2}).shape, (std::vector<std::size_t>{2, 2}));
  try {
    (void)w.require("a", {4});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find("tensor 'a' has shape [2, 2], the config implies [4]"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)w.require("missing.weight", {1});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find("missing tensor 'missing.weight'"), std::string::npos);
  }
}

TEST(ModelWeights, ShardedIndex) {
  const testing::TempDir dir;
  write_shard(dir / "model-00001-of-00002.safetensors", {"a", "b", "unlisted"});
  write_shard(dir / "model-00002-of-00002.safetensors", {"c"});
  write_index(dir / "model.safetensors.index.json",
              R"({"a":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors",)"
              R"("b":"model-00001-of-00002.safetensors"})");
  const auto w = model::formats::ModelWeights::open_dir(dir.path());
  EXPECT_EQ(w.files().size(), 2U);
  EXPECT_EQ(w.names(), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(w.find("unlisted"), nullptr);
  EXPECT_EQ(model::formats::to_float32(w.require("c", {2, 2})), kFour);
}

TEST(ModelWeights, BrokenIndexes) {
  const testing::TempDir dir;
  write_shard(dir / "s1.safetensors", {"a"});
  const auto index = dir / "model.safetensors.index.json";

  write_index(index, R"({"a":"s1.safetensors","b":"s2.safetensors"})");
  EXPECT_NE(open_error(index).find("shard 's2.safetensors' is listed in weight_map but"), std::string::npos);

  write_index(index, R"({"a":"s1.safetensors","b":"s1.safetensors"})");
  EXPECT_NE(
      open_error(index).find("tensor 'b' is listed in shard 's1.safetensors', but that file has no such"),
      std::string::npos);

  write_index(index, R"({"a":"../s1.safetensors"})");
  EXPECT_NE(open_error(index).find("not a plain file name"), std::string::npos);
  write_index(index, R"({"a":"/etc/passwd"})");
  EXPECT_NE(open_error(index).find("not a plain file name"), std::string::npos);

  write_index(index, R"({"a":"s1.safetensors","a":"s1.safetensors"})");
  EXPECT_NE(open_error(index).find("tensor 'a' is listed twice"), std::string::npos);

  write_index(index, R"({"a":7})");
  EXPECT_NE(open_error(index).find("tensor 'a'"), std::string::npos);

  write_file_atomic(index, R"({"metadata":{}})");
  EXPECT_NE(open_error(index).find("weight_map"), std::string::npos);

  write_file_atomic(index, "{not json");
  EXPECT_NE(open_error(index).find("not valid JSON"), std::string::npos);

  // A corrupt shard is reported by the safetensors reader, naming the shard.
  write_file_atomic(dir / "s3.safetensors", "garbage");
  write_index(index, R"({"a":"s3.safetensors"})");
  EXPECT_NE(open_error(index).find("s3.safetensors"), std::string::npos);
}

TEST(ModelWeights, EmptyFolderIsNotFound) {
  const testing::TempDir dir;
  try {
    (void)model::formats::ModelWeights::open_dir(dir.path());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
  }
}

}  // namespace
}  // namespace warden

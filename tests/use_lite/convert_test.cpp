// warden convert-use treats the TF.js files as untrusted: mutated copies of the real
// package's model.json must be refused with an error naming the problem.

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/file.hpp"
#include "embed/use_lite_embedder.hpp"
#include "model/use_lite/use_lite_convert.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

// How model.json (pretty-printed) states the embedding table's shape [8002, 256].
const std::string kEmbeddingsShape =
    "\"name\": \"module/Embeddings_en\",\n          \"shape\": [\n            ";

class UseLiteConvert : public ::testing::Test {
 protected:
  void SetUp() override {
    package_ = embed::use_lite_cache_dir() / "npm" / "package" / "dist";
    ASSERT_TRUE(fs::exists(package_ / "model.json"))
        << "the USE-lite npm package is not in " << package_ << " (scripts/fetch-use-lite fetches it)";
    dir_ = fs::temp_directory_path() / ("warden-use-convert-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "dist");
    for (const auto& entry : fs::directory_iterator(package_)) {
      if (entry.path().filename() != "model.json")
        fs::create_symlink(entry.path(), dir_ / "dist" / entry.path().filename());
    }
    model_json_ = read_file(package_ / "model.json");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Converts with model.json's first `from` replaced by `to`; returns the error message.
  std::string convert_with(const std::string& from, const std::string& to, ErrorKind expected) {
    std::string json = model_json_;
    const auto at = json.find(from);
    if (at == std::string::npos) {
      ADD_FAILURE() << "model.json has no " << from;
      return {};
    }
    json.replace(at, from.size(), to);
    write_file_atomic(dir_ / "dist" / "model.json", json);
    try {
      (void)model::use_lite::convert_use_lite(dir_ / "dist", dir_ / "out");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), expected) << e.what();
      EXPECT_FALSE(fs::exists(dir_ / "out" / "config.json"));
      return e.what();
    }
    ADD_FAILURE() << "converted despite " << from << " -> " << to;
    return {};
  }

  fs::path package_, dir_;
  std::string model_json_;
};

TEST_F(UseLiteConvert, ShardBytesMustMatchTheManifest) {
  const auto e = convert_with(kEmbeddingsShape + "8002,", kEmbeddingsShape + "8003,", ErrorKind::CorruptFile);
  EXPECT_NE(e.find("shards hold"), std::string::npos) << e;
}

TEST_F(UseLiteConvert, ShapesAreChecked) {
  const auto e = convert_with(kEmbeddingsShape + "8002,\n            256",
                              kEmbeddingsShape + "256,\n            8002", ErrorKind::CorruptFile);
  EXPECT_NE(e.find("module/Embeddings_en"), std::string::npos) << e;
}

TEST_F(UseLiteConvert, ShardPathsStayInTheFolder) {
  const auto e = convert_with("\"group1-shard1of7\"", "\"../group1-shard1of7\"", ErrorKind::CorruptFile);
  EXPECT_NE(e.find("not a plain file name"), std::string::npos) << e;
}

TEST_F(UseLiteConvert, UnknownDtypesAreRefused) {
  const auto e = convert_with("\"dtype\": \"float32\"", "\"dtype\": \"float16\"", ErrorKind::Unsupported);
  EXPECT_NE(e.find("float16"), std::string::npos) << e;
}

TEST_F(UseLiteConvert, NotJsonIsRefused) {
  const auto e = convert_with("{", "[", ErrorKind::CorruptFile);
  EXPECT_NE(e.find("model.json"), std::string::npos) << e;
}

}  // namespace
}  // namespace warden

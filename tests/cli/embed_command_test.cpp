#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <cstring>

#include "cli/run_warden.hpp"

namespace warden {
namespace {

using testing::run_warden;

// These tests pin the hashing fallback as the default: with no converted USE-lite folder
// (WARDEN_USE_LITE_DIR names one that does not exist) `warden embed` uses
// hashing-ngram-256 and warns. The use-lite default is tested in tests/use_lite/.
class EmbedCommand : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("WARDEN_USE_LITE_DIR", "/nonexistent/warden-use-lite", 1); }
  void TearDown() override { ::unsetenv("WARDEN_USE_LITE_DIR"); }
};

TEST_F(EmbedCommand, ArgumentsGiveOneJsonLineEach) {
  const auto r = run_warden("embed 'hello world' 'second text'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const std::size_t end = r.out.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    const simdjson::dom::element doc = parser.parse(r.out.substr(start, end - start));
    EXPECT_EQ(doc["embedding"].get_array().size(), 256U);
    start = end + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 2U);
  EXPECT_NE(r.out.find("\"text\":\"hello world\""), std::string::npos);
}

TEST_F(EmbedCommand, WithoutUseLiteTheDefaultIsHashingAndSaysWhy) {
  const auto r = run_warden("embed hi");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: embedding with hashing-ngram-256"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use-lite is not installed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/warden-use-lite"), std::string::npos) << r.err;
  // Naming the hashing embedder is a choice, not a fallback: no warning.
  EXPECT_EQ(run_warden("embed --model hashing-ngram-256 hi").err, "");
}

TEST_F(EmbedCommand, UseLiteWithoutItsFolderIsAClearError) {
  const auto r = run_warden("embed --model use-lite hi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no converted USE-lite model in /nonexistent/warden-use-lite"), std::string::npos)
      << r.err;
}

TEST_F(EmbedCommand, ReadsStdinLineByLine) {
  const auto r = run_warden("embed --model hashing-ngram-256", "one\r\ntwo\nthree\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
  EXPECT_NE(r.out.find("\"text\":\"one\""), std::string::npos);  // the \r was dropped
}

TEST_F(EmbedCommand, UnknownModelExitsTwoAndNamesTheAlternatives) {
  const auto r = run_warden("embed --model nope hi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("unknown model 'nope'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hashing-ngram-256"), std::string::npos) << r.err;
}

TEST_F(EmbedCommand, InvalidUtf8OnStdinIsAnErrorNotGarbage) {
  const auto r = run_warden("embed", "good\nbad \xC0\xAF\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;
}

TEST_F(EmbedCommand, NpyHasAValidHeaderAndFloat32Rows) {
  const auto r = run_warden("embed --format npy a b c");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GT(r.out.size(), 10U);
  EXPECT_EQ(r.out.substr(0, 6), "\x93NUMPY");
  const std::size_t header_len = static_cast<unsigned char>(r.out[8]) |
                                 (static_cast<std::size_t>(static_cast<unsigned char>(r.out[9])) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0U);
  const std::string header = r.out.substr(10, header_len);
  EXPECT_NE(header.find("'shape': (3, 256)"), std::string::npos) << header;
  EXPECT_NE(header.find("'<f4'"), std::string::npos);
  EXPECT_EQ(r.out.size(), 10 + header_len + 3 * 256 * sizeof(float));
}

TEST_F(EmbedCommand, BadFlagIsAUsageError) {
  EXPECT_EQ(run_warden("embed --format xml hi").exit_code, 2);
  EXPECT_EQ(run_warden("no-such-command").exit_code, 2);
  EXPECT_EQ(run_warden("").exit_code, 2);
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

TEST_F(EmbedCommand, ModelDirRunsTheEngineAndRejectsBadFolders) {
  const std::string dir = "/tmp/warden-cli-model-" + std::to_string(::getpid());
  ASSERT_EQ(
      std::system((std::string(WARDEN_BINARY_DIR) +
                   "/bin/warden-fixture --arch bert --preset tiny --seed 3 --out " + dir + " >/dev/null")
                      .c_str()),
      0);
  const auto r = testing::run_warden("embed --model-dir " + dir + " --threads 2 'hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(r.out);
  EXPECT_EQ(doc["embedding"].get_array().size(), 64U);

  const auto missing = testing::run_warden("embed --model-dir /nonexistent/folder hi");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  const auto both = testing::run_warden("embed --model hashing-ngram-256 --model-dir " + dir + " hi");
  EXPECT_EQ(both.exit_code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

// --task (or --prompt-name) prepends the prompt and, on jina-embeddings-v3, runs the task's adapter:
// two tasks with the same (empty) prompt still give different vectors; an unknown one exits 2.
TEST_F(EmbedCommand, TaskPicksThePromptAndTheAdapter) {
  const std::string dir = "/tmp/warden-cli-jina-" + std::to_string(::getpid());
  ASSERT_EQ(
      std::system((std::string(WARDEN_BINARY_DIR) +
                   "/bin/warden-fixture --arch jina-v3 --preset tiny --seed 3 --out " + dir + " >/dev/null")
                      .c_str()),
      0);
  auto vector_of = [&](const std::string& flags) {
    const auto r =
        testing::run_warden("embed --model-dir " + dir + " --threads 2 " + flags + " 'hello world'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<double> v;
    simdjson::dom::parser parser;
    for (const auto x : parser.parse(r.out)["embedding"].get_array()) v.push_back(double(x));
    return v;
  };
  const auto base = vector_of("");
  const auto separation = vector_of("--task separation");
  const auto classification = vector_of("--prompt-name classification");
  ASSERT_EQ(base.size(), 64U);
  EXPECT_NE(base, separation);
  EXPECT_NE(separation, classification);
  EXPECT_EQ(vector_of("--task classification"), classification);
  const auto bad = testing::run_warden("embed --model-dir " + dir + " --task summarization hi");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("summarization"), std::string::npos) << bad.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden

// A text on the command line is a text, whatever it contains: CLI11's `[a,b]` list syntax,
// commas, quotes, dashes, '=', control and non-ASCII characters reach every subcommand
// byte for byte (each echoes or scores what it was given).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/run_warden.hpp"
#include "core/file.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

using testing::run_warden_argv;

const std::vector<std::string>& awkward_texts() {
  static const std::vector<std::string> texts = {
      "[hello]",    "[1, 2]",    "[a,b,c]",
      "[]",         "[",         "]",
      "{\"k\": 1}", "a,b",       "'quoted'",
      "\"double\"", "-dash",     "--double-dash",
      "--model=x",  "a=b",       "line\nbreak",
      "tab\there",  "ünïcödé ✓", "[x]\x1F",
      "\x1F",       "text]",     "[[nested], [lists]]",
      "-",          "=",
  };
  return texts;
}

std::vector<std::string> echoed_texts(const std::string& out) {
  std::vector<std::string> texts;
  simdjson::dom::parser parser;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    if (end == std::string::npos) break;
    const simdjson::dom::element doc = parser.parse(out.substr(start, end - start));
    texts.emplace_back(std::string_view(doc["text"]));
    start = end + 1;
  }
  return texts;
}

class LiteralArguments : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("WARDEN_USE_LITE_DIR", "/nonexistent/warden-use-lite", 1); }
  void TearDown() override { ::unsetenv("WARDEN_USE_LITE_DIR"); }
};

TEST_F(LiteralArguments, EmbedEchoesEveryTextByteForByte) {
  std::vector<std::string> args = {"embed", "--model", "hashing-ngram-256", "--"};
  for (const std::string& t : awkward_texts()) args.push_back(t);
  const auto r = run_warden_argv(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(echoed_texts(r.out), awkward_texts());
}

TEST_F(LiteralArguments, EachBracketedTextIsOneTextWithoutDashDash) {
  const auto r = run_warden_argv({"embed", "--model", "hashing-ngram-256", "[hello]", "[1, 2]"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(echoed_texts(r.out), (std::vector<std::string>{"[hello]", "[1, 2]"}));
}

TEST_F(LiteralArguments, GuardJudgesEveryTextByteForByte) {
  std::vector<std::string> args = {"guard", "--model", "hashing-ngram-256", "--"};
  for (const std::string& t : awkward_texts()) args.push_back(t);
  const auto r = run_warden_argv(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(echoed_texts(r.out), awkward_texts());
}

TEST_F(LiteralArguments, OptionValuesAreLiteralToo) {
  // A bracketed value of a one-value option, given apart or after '=': an unknown model is
  // named exactly as written.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"embed", "--model", "[a,b]", "hi"},
                                               std::vector<std::string>{"embed", "--model=[a,b]", "hi"}}) {
    const auto r = run_warden_argv(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'[a,b]'"), std::string::npos) << r.err;
  }
}

TEST_F(LiteralArguments, RerankQueryIsLiteral) {
  // The score of `--query "[1, 2]"` equals that of a pair whose query field is "[1, 2]".
  const auto dir = std::filesystem::temp_directory_path() / ("warden-literal-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "reranker").string();
  testing::run_fixture_command("warden-fixture --arch bert --head reranker --preset tiny --seed 1 --out DIR",
                               model);
  write_file_atomic(dir / "pairs.jsonl",
                    "{\"id\": 0, \"query\": \"[1, 2]\", \"text\": \"a thing\"}\n"
                    "{\"id\": 1, \"query\": \"1\", \"text\": \"a thing\"}\n");
  write_file_atomic(dir / "passages.txt", "a thing\n");
  const auto pairs = run_warden_argv(
      {"rerank", "--model-dir", model, "--input", (dir / "pairs.jsonl").string(), "--progress", "none"});
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  const auto one = run_warden_argv({"rerank", "--model-dir", model, "--query", "[1, 2]", "--input",
                                    (dir / "passages.txt").string(), "--progress", "none"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  simdjson::dom::parser parser;
  const double bracketed = double(parser.parse(pairs.out.substr(0, pairs.out.find('\n')))["score"]);
  const double plain_one = double(parser.parse(pairs.out.substr(pairs.out.find('\n') + 1))["score"]);
  const double given = double(parser.parse(one.out.substr(0, one.out.find('\n')))["score"]);
  EXPECT_EQ(given, bracketed);
  EXPECT_NE(given, plain_one);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden

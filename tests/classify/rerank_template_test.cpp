// The LLM rerankers' templates: the named ones, a template file's fields and its errors, and the
// pair layout's budgets (the goldens check the named templates' ids against their models' own
// code; these check the cuts at lengths the goldens do not reach).

#include "classify/rerank_template.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "classify/rerank_prompt.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "model/temp_dir.hpp"
#include "support/classifier_goldens.hpp"

namespace warden::classify {
namespace {

namespace fs = std::filesystem;

ErrorKind kind_of(const auto& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;  // no error: never what a test expects
}

TEST(RerankTemplate, TheNamedTemplatesAreTheirModelsCode) {
  for (const std::string_view name : rerank_template_names()) {
    const RerankTemplate t = rerank_template(name);
    EXPECT_EQ(t.name, name);
    EXPECT_FALSE(t.score_tokens.empty());
  }
  EXPECT_EQ(rerank_template("qwen3-reranker").layout, RerankTemplate::Layout::Joint);
  EXPECT_EQ(rerank_template("mxbai-rerank-v2").score_tokens, (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(rerank_template("mxbai-rerank-v2").max_length, 8192U);
  const RerankTemplate bge = rerank_template("bge-reranker-v2-gemma");
  EXPECT_TRUE(bge.bos);
  EXPECT_TRUE(bge.pair_budget_adds_suffix);
  EXPECT_EQ(bge.score_tokens, (std::vector<std::string>{"Yes"}));
  EXPECT_EQ(kind_of([] { (void)rerank_template("mxbai"); }), ErrorKind::InvalidArgument);
}

TEST(RerankTemplate, AFileNamesEveryFieldAndItsErrorsNameTheKey) {
  const testing::TempDir tmp;
  const auto write = [&](const std::string& name, const std::string& json) {
    const fs::path p = tmp / name;
    write_file_atomic(p, json);
    return p.string();
  };
  const RerankTemplate t = rerank_template(
      write("ok.json", R"({"layout": "pair", "prefix": "P", "suffix": ["S1", "S2"], "bos": true,
                          "query": "q: {query}", "query_with_instruction": "i: {instruction} q: {query}",
                          "separator": "|", "document": "d: {document}", "default_instruction": "find",
                          "max_length": 64, "pair_budget_adds_suffix": true,
                          "score_tokens": ["yes", "no"], "token_ids_by_text": true})"));
  EXPECT_EQ(t.layout, RerankTemplate::Layout::Pair);
  EXPECT_EQ(t.suffix, (std::vector<std::string>{"S1", "S2"}));
  EXPECT_EQ(t.max_length, 64U);
  EXPECT_TRUE(t.bos && t.pair_budget_adds_suffix && t.token_ids_by_text);
  EXPECT_EQ(t.default_instruction, "find");
  const auto corrupt = [&](const std::string& json, std::string_view key) {
    SCOPED_TRACE(json);
    const std::string path = write("bad.json", json);
    try {
      (void)rerank_template(path);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  corrupt(R"({"score_tokens": ["yes"], "temperature": 1})", "temperature");
  corrupt(R"({"score_tokens": []})", "score_tokens");
  corrupt(R"({"score_tokens": ["a", "b", "c"]})", "score_tokens");
  corrupt(R"({"score_tokens": ["yes"], "layout": "joint", "body": "{query} only"})", "body");
  corrupt(R"({"score_tokens": ["yes"], "document": "no placeholder"})", "document");
  corrupt(R"({"score_tokens": ["yes"], "layout": "sideways"})", "layout");
  corrupt(R"({"score_tokens": ["yes"], "max_length": -3})", "max_length");
  corrupt(R"({"score_tokens": [1]})", "score_tokens");
  corrupt(R"([1, 2])", "bad.json");
  EXPECT_EQ(kind_of([&] { (void)rerank_template((tmp / "missing.json").string()); }), ErrorKind::NotFound);
}

// A pair template's budgets on the mxbai fixture's tokenizer: the query to 3/4 of max_length, the
// pair to max_length, the fixed pieces whole, and a query's literal "{document}" left as it is.
TEST(RerankPrompt, APairTemplateCutsItsQueryAndDocumentToTheirBudgets) {
  const fs::path dir = testing::make_classifier_fixture("qwen2-mxbai-reranker");
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_directory(dir);
  RerankTemplate t = rerank_template("mxbai-rerank-v2");
  t.max_length = 40;
  const RerankPrompt prompt(t, tok, dir);
  tokenizer::EncodeOptions bare;
  bare.add_special_tokens = false;
  const auto count = [&](std::string_view text) { return tok.encode(text, bare).ids.size(); };
  std::size_t fixed = count(t.prefix);
  for (const std::string& s : t.suffix) fixed += count(s);
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "word ";
  tokenizer::TruncationParams limit;
  limit.max_length = 100000;
  const auto ids = prompt.encode(tok, "", long_text, long_text, bare, limit);
  EXPECT_EQ(ids.size(), fixed + 40);  // the pair exactly at its budget
  const auto short_doc = prompt.encode(tok, "", long_text, "tiny", bare, limit);
  // The query alone took 3/4 of the budget: 30 tokens, then the separator and the document's.
  EXPECT_EQ(short_doc.size(), fixed + 30 + count("\n") + count("document: tiny"));
  // Without truncation nothing is cut.
  EXPECT_GT(prompt.encode(tok, "", long_text, long_text, bare, std::nullopt).size(), 400U);
  // A limit below the fixed pieces is refused; one just above them leaves the pair that much.
  limit.max_length = fixed;
  EXPECT_EQ(kind_of([&] { (void)prompt.encode(tok, "", "q", "d", bare, limit); }), ErrorKind::InvalidInput);
  limit.max_length = fixed + 20;
  EXPECT_EQ(prompt.encode(tok, "", long_text, long_text, bare, limit).size(), fixed + 20);
  // Placeholders are filled once: the query's "{document}" is text, not the document.
  const auto literal = prompt.encode(tok, "", "{document}", "x", bare, std::nullopt);
  const auto plain = prompt.encode(tok, "", "D", "x", bare, std::nullopt);
  EXPECT_NE(literal, plain);
  EXPECT_EQ(literal.size(), plain.size() - count("query: D") + count("query: {document}"));
  // The score tokens are the first ids of "1" and "0".
  EXPECT_EQ(prompt.score_ids(),
            (std::vector<std::uint32_t>{tok.encode("1", bare).ids[0], tok.encode("0", bare).ids[0]}));
  fs::remove_all(dir);
}

TEST(RerankPrompt, AScoreTokenOrBosTheTokenizerLacksIsNamed) {
  const fs::path dir = testing::make_classifier_fixture("qwen2-mxbai-reranker");
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_directory(dir);
  RerankTemplate t = rerank_template("qwen3-reranker");
  t.score_tokens = {"no-such-token-here"};
  try {
    const RerankPrompt prompt(t, tok, dir);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find("no-such-token-here"), std::string::npos);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden::classify

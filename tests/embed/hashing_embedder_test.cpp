#include "embed/hashing_embedder.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "embed/registry.hpp"

namespace warden {
namespace {

struct Reference {
  std::string text;
  std::vector<float> embedding;
};

std::vector<Reference> load_references() {
  const std::string path = std::string(WARDEN_TEST_DATA) + "/hashing-ngram-256.jsonl";
  const std::string content = read_file(path);
  simdjson::dom::parser parser;
  std::vector<Reference> refs;
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    const std::string line = content.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const simdjson::dom::element doc = parser.parse(line);
    Reference ref;
    ref.text = std::string(std::string_view(doc["text"]));
    for (const auto v : doc["embedding"].get_array()) ref.embedding.push_back(static_cast<float>(double(v)));
    refs.push_back(std::move(ref));
  }
  return refs;
}

std::vector<float> embed_one(std::string_view text) {
  const HashingEmbedder embedder;
  const std::string_view texts[] = {text};
  const Embeddings e = embedder.embed(texts);
  return {e.row(0).begin(), e.row(0).end()};
}

TEST(HashingEmbedder, MatchesEverySharedTestVector) {
  const auto refs = load_references();
  ASSERT_GE(refs.size(), 20U);
  const HashingEmbedder embedder;
  std::vector<std::string_view> texts;
  for (const auto& r : refs) texts.push_back(r.text);
  const Embeddings got = embedder.embed(texts);  // all at once: batching changes nothing
  ASSERT_EQ(got.rows(), refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    ASSERT_EQ(refs[i].embedding.size(), HashingEmbedder::kDim) << refs[i].text;
    for (std::size_t d = 0; d < HashingEmbedder::kDim; ++d) {
      ASSERT_NEAR(got.row(i)[d], refs[i].embedding[d], 1e-6) << "text " << i << " dim " << d;
    }
  }
}

TEST(HashingEmbedder, DeclaresItself) {
  const HashingEmbedder embedder;
  EXPECT_EQ(embedder.id(), "hashing-ngram-256");
  EXPECT_EQ(embedder.dim(), 256U);
  EXPECT_FALSE(embedder.semantic());
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for (const float x : v) s += double(x) * double(x);
  return std::sqrt(s);
}

TEST(HashingEmbedder, EmptyAndWhitespaceOnlyAreTheSameUnitVector) {
  const auto empty = embed_one("");
  EXPECT_NEAR(norm(empty), 1.0, 1e-6);  // "  " still has one bigram
  EXPECT_EQ(embed_one(" \t\n\u3000"), empty);
  EXPECT_EQ(embed_one("\xE3\x80\x80"), empty);  // U+3000 alone
}

TEST(HashingEmbedder, WhitespaceRunsAndCaseDoNotMatter) {
  EXPECT_EQ(embed_one("Hello,   WORLD!"), embed_one("hello, world!"));
  EXPECT_EQ(embed_one("a\xC2\xA0"
                      "b"),
            embed_one("a b"));  // NBSP splits
  EXPECT_NE(embed_one("a\xE2\x80\x8B"
                      "b"),
            embed_one("a b"));  // ZWSP does not
}

TEST(HashingEmbedder, CjkEmojiAndCombiningMarksAreUnitVectors) {
  for (const char* text :
       {"\xE8\x8B\xB9\xE6\x9E\x9C", "\xF0\x9F\x99\x82\xF0\x9F\x9A\x80", "e\xCC\x81\xCC\x81\xCC\x81"}) {
    EXPECT_NEAR(norm(embed_one(text)), 1.0, 1e-6) << text;
  }
  // A precomposed letter and its decomposition are different code points: different grams.
  EXPECT_NE(embed_one("caf\xC3\xA9"), embed_one("cafe\xCC\x81"));
}

TEST(HashingEmbedder, IsDeterministicAcrossInstances) {
  EXPECT_EQ(embed_one("the same text"), embed_one("the same text"));
}

TEST(HashingEmbedder, InvalidUtf8IsAClearErrorNamingTheInput) {
  const HashingEmbedder embedder;
  const std::string_view texts[] = {"fine", "bad \xED\xA0\x80 surrogate"};
  try {
    (void)embedder.embed(texts);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("input 1"), std::string::npos) << e.what();
  }
}

TEST(Registry, UnknownNameListsTheAvailableOnes) {
  try {
    (void)make_builtin_embedder("no-such-model");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_NE(std::string(e.what()).find("hashing-ngram-256"), std::string::npos);
  }
  EXPECT_EQ(make_builtin_embedder("hashing-ngram-256")->dim(), 256U);
}

}  // namespace
}  // namespace warden

#include "embed/hashing_embedder.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
  const embed::HashingEmbedder embedder;
  const std::string_view texts[] = {text};
  const Embeddings e = embedder.embed(texts);
  return {e.row(0).begin(), e.row(0).end()};
}

TEST(HashingEmbedder, MatchesEverySharedTestVector) {
  const auto refs = load_references();
  ASSERT_GE(refs.size(), 20U);
  const embed::HashingEmbedder embedder;
  std::vector<std::string_view> texts;
  for (const auto& r : refs) texts.push_back(r.text);
  const Embeddings got = embedder.embed(texts);  // all at once: batching changes nothing
  ASSERT_EQ(got.rows(), refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    ASSERT_EQ(refs[i].embedding.size(), embed::HashingEmbedder::kDim) << refs[i].text;
    for (std::size_t d = 0; d < embed::HashingEmbedder::kDim; ++d) {
      ASSERT_NEAR(got.row(i)[d], refs[i].embedding[d], 1e-6) << "text " << i << " dim " << d;
    }
  }
}

TEST(HashingEmbedder, DeclaresItself) {
  const embed::HashingEmbedder embedder;
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
  const embed::HashingEmbedder embedder;
  const std::string_view texts[] = {"fine", "bad \xED\xA0\x80 surrogate"};
  try {
    (void)embedder.embed(texts);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("input 1"), std::string::npos) << e.what();
  }
}

// The two-stage interface: prepare() keeps prompt + text and counts code points.
TEST(HashingEmbedder, PrepareKeepsPromptAndTextAndCountsCodePoints) {
  const embed::HashingEmbedder embedder;
  EXPECT_EQ(embedder.max_input_tokens(), 0U);
  const embed::PreparedInput plain = embedder.prepare("h\xC3\xA9llo \xF0\x9F\x99\x82", embed::InputOptions{});
  EXPECT_EQ(plain.text, "h\xC3\xA9llo \xF0\x9F\x99\x82");
  EXPECT_EQ(plain.tokens, 7U);  // h é l l o space 🙂
  EXPECT_EQ(plain.prompt_tokens, 0U);
  EXPECT_TRUE(plain.ids.empty());
  embed::InputOptions with_prompt;
  with_prompt.prompt = "q\xC3\xA9: ";
  const embed::PreparedInput prompted = embedder.prepare("abc", with_prompt);
  EXPECT_EQ(prompted.text, "q\xC3\xA9: abc");
  EXPECT_EQ(prompted.tokens, 7U);
  EXPECT_EQ(prompted.prompt_tokens, 4U);
  EXPECT_EQ(embedder.prepare("", embed::InputOptions{}).tokens, 0U);
  EXPECT_THROW((void)embedder.prepare("bad \xFF", embed::InputOptions{}), Error);
}

TEST(HashingEmbedder, TruncateHasNoEffectWithoutALimit) {
  const embed::HashingEmbedder embedder;
  const std::string long_text(10000, 'a');
  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_EQ(embedder.prepare(long_text, strict).tokens, 10000U);
  strict.side = embed::TruncationSide::Left;
  EXPECT_EQ(embedder.prepare(long_text, strict).text, long_text);
}

TEST(HashingEmbedder, EmbedPreparedOverAMixedBatchEqualsOneByOneAndEmbed) {
  const embed::HashingEmbedder embedder;
  embed::InputOptions prompted;
  prompted.prompt = "query: ";
  const std::vector<embed::PreparedInput> prepared{embedder.prepare("first text", embed::InputOptions{}),
                                                   embedder.prepare("second", prompted),
                                                   embedder.prepare("", embed::InputOptions{})};
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : prepared) ptrs.push_back(&p);
  std::vector<float> batch(ptrs.size() * embed::HashingEmbedder::kDim);
  embedder.embed_prepared(ptrs, batch);
  for (std::size_t i = 0; i < ptrs.size(); ++i) {
    std::vector<float> alone(embed::HashingEmbedder::kDim);
    embedder.embed_prepared(std::span(&ptrs[i], 1), alone);
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batch.begin() + static_cast<std::ptrdiff_t>(i * 256)))
        << i;
  }
  // The prompt is part of the text that is hashed.
  EXPECT_EQ(std::vector<float>(batch.begin() + 256, batch.begin() + 512), embed_one("query: second"));
  EXPECT_EQ(std::vector<float>(batch.begin(), batch.begin() + 256), embed_one("first text"));
}

TEST(HashingEmbedder, HasNoTokenizerNorVocabulary) {
  const embed::HashingEmbedder embedder;
  const std::uint32_t ids[] = {1, 2};
  const auto unsupported = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
      EXPECT_NE(std::string(e.what()).find("hashing-ngram-256"), std::string::npos) << e.what();
    }
  };
  unsupported([&] { (void)embedder.prepare_ids(ids, embed::InputOptions{}); });
  unsupported([&] { (void)embedder.tokenize("text", embed::InputOptions{}); });
  unsupported([&] { (void)embedder.decode(ids, true); });
  const embed::PreparedInput p = embedder.prepare("x", embed::InputOptions{});
  const embed::PreparedInput* ptr = &p;
  unsupported([&] { (void)embedder.embed_tokens(std::span(&ptr, 1)); });
  EXPECT_TRUE(embedder.prompts().empty());
  EXPECT_FALSE(embedder.default_prompt_name().has_value());
}

TEST(Registry, UnknownNameListsTheAvailableOnes) {
  try {
    (void)embed::make_builtin_embedder("no-such-model");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_NE(std::string(e.what()).find("hashing-ngram-256"), std::string::npos);
  }
  EXPECT_EQ(embed::make_builtin_embedder("hashing-ngram-256")->dim(), 256U);
}

}  // namespace
}  // namespace warden

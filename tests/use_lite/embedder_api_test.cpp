// The two-stage Embedder interface on the real USE-lite model: prepare / embed_prepared,
// truncation sides, prompts, ids, /tokenize offsets, /decode and per-token states.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/use_lite_embedder.hpp"
#include "use_lite/use_lite_reference.hpp"

namespace warden {
namespace {

struct Shared {
  ThreadPool pool{2};
  embed::UseLiteEmbedder embedder{test::use_lite_test_model(), &pool};
};

Shared& shared() {
  static Shared s;
  return s;
}

std::vector<float> embed_prepared(const embed::Embedder& e, const std::vector<embed::PreparedInput>& inputs) {
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : inputs) ptrs.push_back(&p);
  std::vector<float> out(inputs.size() * e.dim());
  e.embed_prepared(ptrs, out);
  return out;
}

std::string long_text() {
  std::string s;
  for (int i = 0; i < 40; ++i)
    s += "The quick brown fox jumps over the lazy dog number " + std::to_string(i) + ". ";
  return s;
}

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.what();
  }
  return "no error";
}

TEST(UseLiteEmbedderApi, EmbedIsEmbedPreparedUnchanged) {
  const auto& e = shared().embedder;
  EXPECT_EQ(e.max_input_tokens(), 128U);
  EXPECT_TRUE(e.unit_vectors());
  const std::vector<std::string_view> texts{"How old are you?", "", "What is your age?"};
  const Embeddings got = e.embed(texts);
  const std::vector<float> raw =
      embed_prepared(e, {e.prepare(texts[0], {}), e.prepare(texts[1], {}), e.prepare(texts[2], {})});
  EXPECT_TRUE(std::equal(raw.begin(), raw.end(), got.values().begin()));
}

TEST(UseLiteEmbedderApi, MixedBatchEqualsOneByOne) {
  const auto& e = shared().embedder;
  embed::InputOptions left;
  left.side = embed::TruncationSide::Left;
  embed::InputOptions prompted;
  prompted.prompt = "query: ";
  const std::vector<std::uint32_t> ids = e.prepare("hello there", {}).ids;
  const std::vector<embed::PreparedInput> inputs{e.prepare("short", {}), e.prepare(long_text(), left),
                                                 e.prepare("", {}),      e.prepare("with a prompt", prompted),
                                                 e.prepare_ids(ids, {}), e.prepare(long_text(), {})};
  const std::vector<float> batch = embed_prepared(e, inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<float> alone = embed_prepared(e, {inputs[i]});
    for (std::size_t j = 0; j < e.dim(); ++j) ASSERT_NEAR(batch[i * e.dim() + j], alone[j], 1e-6) << i;
  }
}

TEST(UseLiteEmbedderApi, TruncationSidesAndTheTooLongError) {
  const auto& e = shared().embedder;
  const std::string text = long_text();
  const std::vector<std::uint32_t> full = e.tokenizer().encode(text);
  ASSERT_GT(full.size(), 300U);
  const embed::PreparedInput right = e.prepare(text, {});
  embed::InputOptions left_options;
  left_options.side = embed::TruncationSide::Left;
  const embed::PreparedInput left = e.prepare(text, left_options);
  EXPECT_EQ(right.ids, std::vector<std::uint32_t>(full.begin(), full.begin() + 128));
  EXPECT_EQ(left.ids, std::vector<std::uint32_t>(full.end() - 128, full.end()));
  EXPECT_EQ(right.tokens, 128U);
  const std::vector<float> both = embed_prepared(e, {left, right});
  EXPECT_FALSE(std::equal(both.begin(), both.begin() + 512, both.begin() + 512));
  // Right truncation is what the graph does with a long text anyway.
  const std::string_view view = text;
  const Embeddings graph = e.embed(std::span(&view, 1));
  EXPECT_TRUE(std::equal(both.begin() + 512, both.end(), graph.values().begin()));

  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_EQ(error_of([&] { (void)e.prepare(text, strict); }),
            "invalid_input: input has " + std::to_string(full.size()) +
                " tokens, more than the model's maximum of 128");
  EXPECT_EQ(e.prepare("short", strict).ids, e.prepare("short", {}).ids);
}

TEST(UseLiteEmbedderApi, PromptsArePrepended) {
  const auto& e = shared().embedder;
  EXPECT_TRUE(e.prompts().empty());
  embed::InputOptions prompted;
  prompted.prompt = "query: ";
  const embed::PreparedInput p = e.prepare("how old are you", prompted);
  EXPECT_EQ(p.ids, e.tokenizer().encode("query: how old are you"));
  EXPECT_EQ(p.prompt_tokens, e.tokenizer().encode("query: ").size());
}

TEST(UseLiteEmbedderApi, PrepareIdsChecksTheVocabulary) {
  const auto& e = shared().embedder;
  const std::uint32_t vocab = static_cast<std::uint32_t>(e.model().config().vocab);
  const std::uint32_t bad[] = {30, vocab + 1};
  EXPECT_EQ(error_of([&] { (void)e.prepare_ids(bad, {}); }),
            "invalid_input: token id " + std::to_string(vocab + 1) +
                " (position 1) is outside the vocabulary of " + std::to_string(vocab) + " tokens");
  std::vector<std::uint32_t> many(200, 30);
  many.back() = 57;
  embed::InputOptions left;
  left.side = embed::TruncationSide::Left;
  EXPECT_EQ(e.prepare_ids(many, left).ids.back(), 57U);
  EXPECT_EQ(e.prepare_ids(many, {}).ids.size(), 128U);
  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_NE(error_of([&] { (void)e.prepare_ids(many, strict); }), "no error");
}

TEST(UseLiteEmbedderApi, TokenizeOffsetsSliceTheText) {
  const auto& e = shared().embedder;
  const std::string text = "Hello there, how old are you?";
  const std::vector<embed::TokenInfo> tokens = e.tokenize(text, {});
  ASSERT_EQ(tokens.size(), e.prepare(text, {}).ids.size());
  std::string joined;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const embed::TokenInfo& t = tokens[i];
    EXPECT_FALSE(t.special);
    EXPECT_EQ(t.id, e.prepare(text, {}).ids[i]);
    EXPECT_EQ(t.text, e.tokenizer().piece(t.id));
    ASSERT_TRUE(t.start && t.stop);
    const std::string slice = text.substr(*t.start, *t.stop - *t.start);
    std::string piece = e.decode(std::span(&t.id, 1), false);  // "▁" -> " ", leading one dropped
    if (i > 0 && t.text.rfind("\u2581", 0) == 0) piece.insert(0, " ");
    EXPECT_EQ(slice, piece) << i << " " << t.text;
    joined += slice;
  }
  EXPECT_EQ(joined, text);
  // The prompt is part of the text the offsets index.
  embed::InputOptions prompted;
  prompted.prompt = "q: ";
  const std::vector<embed::TokenInfo> with_prompt = e.tokenize("hello", prompted);
  EXPECT_EQ(with_prompt.back().stop, 8U);
  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_THROW((void)e.tokenize(long_text(), strict), Error);
  EXPECT_EQ(e.tokenize(long_text(), {}).size(), 128U);
}

TEST(UseLiteEmbedderApi, DecodeRoundTrips) {
  const auto& e = shared().embedder;
  const std::string text = "How old are you? I am fine, thanks.";
  EXPECT_EQ(e.decode(e.prepare(text, {}).ids, true), text);
  const std::uint32_t control[] = {1, 30, 2};  // <s> ▁ </s>
  EXPECT_EQ(e.decode(control, true), "");
  const std::uint32_t bad[] = {static_cast<std::uint32_t>(e.tokenizer().vocab_size())};
  EXPECT_EQ(error_of([&] { (void)e.decode(bad, true); }).rfind("invalid_input", 0), 0U);
}

TEST(UseLiteEmbedderApi, EmbedTokensAreTheLastLayerPerToken) {
  const auto& e = shared().embedder;
  const std::vector<embed::PreparedInput> inputs{e.prepare("one two three", {}), e.prepare("", {}),
                                                 e.prepare("How old are you?", {})};
  const std::vector<const embed::PreparedInput*> ptrs{&inputs[0], &inputs[1], &inputs[2]};
  const std::vector<Embeddings> states = e.embed_tokens(ptrs);
  ASSERT_EQ(states.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(states[i].rows(), inputs[i].ids.size());
    const std::vector<Embeddings> alone = e.embed_tokens(std::span(&ptrs[i], 1));
    ASSERT_EQ(alone[0].values().size(), states[i].values().size());
    for (std::size_t k = 0; k < alone[0].values().size(); ++k)
      ASSERT_NEAR(alone[0].values()[k], states[i].values()[k], 1e-5) << i;
  }
  EXPECT_EQ(states[0].dim(), 512U);
}

}  // namespace
}  // namespace warden

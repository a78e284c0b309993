// The sequence classifier end to end (tokenizer pair template, truncation, encoder, head)
// against the PyTorch goldens of the reranker and classifier fixtures: raw logits within
// 1e-4, alone and in one mixed batch, and the same ids as the reference's tokenizer.

#include "classify/sequence_classifier.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/model_folder.hpp"
#include "support/classifier_goldens.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;
using testing::ClassifierCase;

constexpr double kTolerance = 1e-4;  // the bar for fp32 against PyTorch

struct Expect {
  const char* name;
  classify::ClassifierKind kind;
  std::size_t labels;
};
constexpr Expect kModels[] = {
    {"bert-reranker", classify::ClassifierKind::Reranker, 1},
    {"xlm-roberta-reranker", classify::ClassifierKind::Reranker, 1},
    {"distilbert-classifier", classify::ClassifierKind::Classifier, 3},
    {"deberta-v2-classifier", classify::ClassifierKind::Classifier, 3},
    {"jina-bert-reranker", classify::ClassifierKind::Reranker, 1},
    {"mpnet-reranker", classify::ClassifierKind::Reranker, 1},
    {"gte-reranker", classify::ClassifierKind::Reranker, 1},
    {"modernbert-reranker", classify::ClassifierKind::Reranker, 1},
    {"modernbert-classifier", classify::ClassifierKind::Classifier, 3},
    // LLM rerankers: the pair in their template's prompt, scored from the LM head.
    {"qwen3-reranker", classify::ClassifierKind::Reranker, 1},
    {"qwen2-mxbai-reranker", classify::ClassifierKind::Reranker, 1},
    {"gemma-reranker", classify::ClassifierKind::Reranker, 1},
};

embed::PreparedInput prepare(const classify::SequenceClassifier& c, const ClassifierCase& k,
                             embed::InputOptions o = {}) {
  o.prompt = k.instruction;
  return c.prepare(k.text, k.pair ? std::optional<std::string_view>(*k.pair) : std::nullopt, o);
}

TEST(NeuralClassifier, MatchesTheReferenceAloneAndInAMixedBatch) {
  ThreadPool pool(2);
  for (const Expect& m : kModels) {
    SCOPED_TRACE(m.name);
    const auto golden = testing::read_classifier_golden(m.name);
    const fs::path dir = testing::make_classifier_fixture(m.name);
    ASSERT_TRUE(embed::has_classification_head(dir, golden.rerank_template));
    const classify::NeuralClassifier c(dir, &pool, Precision::Float32, golden.rerank_template);
    EXPECT_EQ(c.kind(), m.kind);
    ASSERT_EQ(c.labels().size(), m.labels);
    EXPECT_GT(c.max_input_tokens(), 0U);

    std::vector<embed::PreparedInput> prepared;
    bool any_pair = false;
    for (const ClassifierCase& k : golden.cases) {
      prepared.push_back(prepare(c, k));
      EXPECT_EQ(prepared.back().ids, k.ids) << k.text;
      any_pair = any_pair || k.pair.has_value();
    }
    EXPECT_TRUE(any_pair);
    // One batch of every case, singles and pairs of mixed lengths.
    std::vector<const embed::PreparedInput*> all;
    for (const embed::PreparedInput& p : prepared) all.push_back(&p);
    std::vector<float> batch(all.size() * m.labels);
    c.classify_prepared(all, batch);
    double worst = 0;
    for (std::size_t i = 0; i < golden.cases.size(); ++i) {
      const ClassifierCase& k = golden.cases[i];
      std::vector<float> alone(m.labels);
      const embed::PreparedInput* one[] = {&prepared[i]};
      c.classify_prepared(one, alone);
      for (std::size_t l = 0; l < m.labels; ++l) {
        worst = std::max(worst, std::fabs(double(batch[i * m.labels + l]) - k.logits[l]));
        worst = std::max(worst, std::fabs(double(alone[l]) - k.logits[l]));
        EXPECT_NEAR(double(batch[i * m.labels + l]), k.logits[l], kTolerance) << k.text << " label " << l;
        EXPECT_NEAR(double(alone[l]), k.logits[l], kTolerance) << k.text << " label " << l;
      }
    }
    std::printf("[ golden ] %s: %zu cases, max |logit - PyTorch| = %.3g\n", m.name, golden.cases.size(),
                worst);
    fs::remove_all(dir);
  }
}

// A yes/no reranker (Qwen3-Reranker) puts the pair into its model card's prompt: the instruction
// is the request's (the card's by default), a single text is refused, and truncation cuts the
// body while the prompt's frame stays whole.
TEST(NeuralClassifier, AYesNoRerankerScoresThePairInItsPrompt) {
  ThreadPool pool(1);
  const fs::path dir = testing::make_classifier_fixture("qwen3-reranker");
  ASSERT_TRUE(embed::has_classification_head(dir));
  const classify::NeuralClassifier c(dir, &pool);
  EXPECT_TRUE(c.takes_instruction());
  EXPECT_EQ(c.kind(), classify::ClassifierKind::Reranker);
  const std::string query = "what is the capital of France?";
  const std::string doc = "Paris is the capital and largest city of France.";
  const embed::PreparedInput plain = c.prepare(query, doc, {});
  embed::InputOptions told;
  told.prompt = "Given a question, find the sentence that answers it";
  const embed::PreparedInput instructed = c.prepare(query, doc, told);
  EXPECT_NE(instructed.ids, plain.ids);
  // The same frame: the card's prefix and suffix around the body.
  const tokenizer::Tokenizer tokenizer = tokenizer::Tokenizer::from_directory(dir);
  tokenizer::EncodeOptions bare;
  bare.add_special_tokens = false;
  const auto prefix = static_cast<std::ptrdiff_t>(
      tokenizer
          .encode(
              "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and "
              "the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
              "<|im_start|>user\n",
              bare)
          .ids.size());
  const auto suffix = static_cast<std::ptrdiff_t>(
      tokenizer.encode("<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n", bare).ids.size());
  EXPECT_TRUE(std::equal(plain.ids.begin(), plain.ids.begin() + prefix, instructed.ids.begin()));
  EXPECT_TRUE(std::equal(plain.ids.end() - suffix, plain.ids.end(), instructed.ids.end() - suffix));
  std::vector<float> logits(2);
  const embed::PreparedInput* both[] = {&plain, &instructed};
  c.classify_prepared(both, logits);
  EXPECT_NE(logits[0], logits[1]);
  EXPECT_THROW((void)c.prepare(query, std::nullopt, {}), Error);  // a single text
  // A body longer than the model takes: cut to the maximum, the frame whole.
  std::string long_doc;
  for (int i = 0; i < 40000; ++i) long_doc += "word ";
  const embed::PreparedInput cut = c.prepare(query, long_doc, {});
  ASSERT_EQ(cut.ids.size(), c.max_input_tokens());
  EXPECT_TRUE(std::equal(plain.ids.begin(), plain.ids.begin() + prefix, cut.ids.begin()));
  EXPECT_TRUE(std::equal(plain.ids.end() - suffix, plain.ids.end(), cut.ids.end() - suffix));
  embed::InputOptions strict;
  strict.truncate = false;
  try {
    (void)c.prepare(query, long_doc, strict);
    ADD_FAILURE() << "accepted an input over the maximum";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("more than the model's maximum"), std::string::npos) << e.what();
  }
  // Cross-encoders take no instruction.
  const classify::NeuralClassifier bert(testing::make_classifier_fixture("bert-reranker"), &pool);
  EXPECT_FALSE(bert.takes_instruction());
  EXPECT_THROW((void)bert.prepare(query, doc, told), Error);
}

TEST(NeuralClassifier, PairTruncationKeepsAShortQuery) {
  ThreadPool pool(1);
  const fs::path dir = testing::make_classifier_fixture("bert-reranker");
  const classify::NeuralClassifier c(dir, &pool);
  std::string passage;
  for (int i = 0; i < 2000; ++i) passage += "word ";
  const std::string query = "what is the capital of France?";
  const embed::PreparedInput p = c.prepare(query, passage, {});
  ASSERT_EQ(p.ids.size(), c.max_input_tokens());
  // BERT: [CLS] query [SEP] passage [SEP], type ids 0 then 1; the query is whole.
  const embed::PreparedInput q = c.prepare(query, std::string_view("x"), {});
  const std::size_t query_part = q.ids.size() - 2;  // less "x" and the final [SEP]
  EXPECT_TRUE(
      std::equal(q.ids.begin(), q.ids.begin() + static_cast<std::ptrdiff_t>(query_part), p.ids.begin()));
  ASSERT_EQ(p.type_ids.size(), p.ids.size());
  EXPECT_EQ(p.type_ids.front(), 0U);
  EXPECT_EQ(p.type_ids.back(), 1U);
  // Left truncation keeps the query too and cuts the passage's start.
  embed::InputOptions left;
  left.side = embed::TruncationSide::Left;
  const embed::PreparedInput l = c.prepare(query, passage, left);
  EXPECT_EQ(l.ids.size(), c.max_input_tokens());
  EXPECT_TRUE(
      std::equal(q.ids.begin(), q.ids.begin() + static_cast<std::ptrdiff_t>(query_part), l.ids.begin()));
  // Two long texts: both are cut.
  const embed::PreparedInput both = c.prepare(passage, passage, {});
  EXPECT_EQ(both.ids.size(), c.max_input_tokens());
  // truncate = false refuses, saying how long.
  embed::InputOptions strict;
  strict.truncate = false;
  try {
    (void)c.prepare(query, passage, strict);
    FAIL() << "expected InvalidInput";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("more than the model's maximum"), std::string::npos) << e.what();
  }
  // Invalid UTF-8 is the input's fault.
  EXPECT_THROW((void)c.prepare(query, std::string_view("\xff\xfe"), {}), Error);
  fs::remove_all(dir);
}

// HF tokenizers' longest_first (transformers' truncation=True, sentence-transformers'
// CrossEncoder, TEI): a long first text and a short second one keep the second whole and cut
// the first to what is left — not the first whole and the second cut (only_second).
TEST(NeuralClassifier, PairTruncationIsLongestFirstAsHuggingFaceDoes) {
  ThreadPool pool(1);
  for (const char* name : {"bert-reranker", "deberta-v2-classifier", "xlm-roberta-reranker"}) {
    SCOPED_TRACE(name);
    const fs::path dir = testing::make_classifier_fixture(name);
    const classify::NeuralClassifier c(dir, &pool);
    const std::size_t m = c.max_input_tokens();
    // A first text of about 3/4 of the model's length and a second of about 1/3: together
    // too long, each short enough alone (only_second would keep the first whole).
    std::string second;
    std::string first;
    for (std::size_t i = 0; i < m / 3; ++i) second += "b ";
    for (std::size_t i = 0; i < 3 * m / 4; ++i) first += "a ";
    embed::InputOptions whole;
    whole.truncate = false;
    whole.add_special_tokens = false;
    const std::size_t second_len = c.prepare(second, std::nullopt, whole).ids.size();
    ASSERT_LT(second_len, m / 2);
    ASSERT_LT(c.prepare(first, std::nullopt, whole).ids.size(), m - 3);
    const embed::PreparedInput p = c.prepare(first, std::string_view(second), {});
    ASSERT_EQ(p.ids.size(), m);
    // The tail is the whole second text and the template's closing tokens: the same as the
    // tail of a short pair with that second text.
    const embed::PreparedInput short_pair = c.prepare("a", std::string_view(second), {});
    const std::size_t tail = second_len + 1;  // ... B [SEP] (XLM-R: ... B </s>)
    ASSERT_GT(short_pair.ids.size(), tail);
    EXPECT_TRUE(std::equal(short_pair.ids.end() - static_cast<std::ptrdiff_t>(tail), short_pair.ids.end(),
                           p.ids.end() - static_cast<std::ptrdiff_t>(tail)));
    // And the mirror image: a long second text is cut, a short first kept.
    const embed::PreparedInput mirror = c.prepare(second, std::string_view(first), {});
    ASSERT_EQ(mirror.ids.size(), m);
    const embed::PreparedInput short_mirror = c.prepare(second, std::string_view("a"), {});
    const std::size_t head = second_len + 1;  // [CLS] A (XLM-R: <s> A)
    EXPECT_TRUE(std::equal(short_mirror.ids.begin(),
                           short_mirror.ids.begin() + static_cast<std::ptrdiff_t>(head), mirror.ids.begin()));
    fs::remove_all(dir);
  }
}

// An LLM reranker in int8 and bfloat16 scores as in float32 within about 2x the error measured
// on these fixtures (logits of magnitude 0.05-4): int8 max |diff| 0.173 (qwen3), bf16 0.052
// (qwen2) -> bars 0.35 and 0.1, a score (sigmoid) within 0.09 and 0.025. Its one logit is the last
// token's state against one float32 LM-head row, so the state's rounding is all it carries.
TEST(NeuralClassifier, LlmRerankersInReducedPrecisionKeepTheirScores) {
  ThreadPool pool(2);
  for (const char* name : {"qwen3-reranker", "qwen2-mxbai-reranker", "gemma-reranker"}) {
    SCOPED_TRACE(name);
    const auto golden = testing::read_classifier_golden(name);
    const fs::path dir = testing::make_classifier_fixture(name);
    const classify::NeuralClassifier f32(dir, &pool, Precision::Float32, golden.rerank_template);
    for (const auto& [precision, bar] :
         {std::pair{Precision::Int8, 0.35}, std::pair{Precision::BFloat16, 0.1}}) {
      const classify::NeuralClassifier reduced(dir, &pool, precision, golden.rerank_template);
      double worst = 0;
      for (const ClassifierCase& k : golden.cases) {
        const embed::PreparedInput a = prepare(f32, k), b = prepare(reduced, k);
        ASSERT_EQ(a.ids, b.ids);
        float la = 0, lb = 0;
        const embed::PreparedInput* one_a[] = {&a};
        const embed::PreparedInput* one_b[] = {&b};
        f32.classify_prepared(one_a, std::span(&la, 1));
        reduced.classify_prepared(one_b, std::span(&lb, 1));
        worst = std::max(worst, std::fabs(double(la) - double(lb)));
      }
      EXPECT_LE(worst, bar) << precision_name(precision);
      std::printf("[ precision ] %s %s: max |logit - float32| = %.3g\n", name,
                  std::string(precision_name(precision)).c_str(), worst);
    }
    fs::remove_all(dir);
  }
}

TEST(NeuralClassifier, AnEmbeddingFolderIsNotAClassifier) {
  ThreadPool pool(1);
  const fs::path dir = testing::make_classifier_fixture("bert-none");
  EXPECT_FALSE(embed::has_classification_head(dir));
  try {
    const classify::NeuralClassifier c(dir, &pool);
    FAIL() << "expected InvalidArgument";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden

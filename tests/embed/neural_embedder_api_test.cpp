// The two-stage Embedder interface over HF folders (prepare / embed_prepared and the
// /tokenize, /decode, /embed_all helpers) on the tiny generated fixtures.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "model/heads/pooling.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrompted =
    "warden-fixture --arch bert --head none --preset tiny --seed 1 --pooling mean "
    "--prompt 'query=query: ' --prompt 'passage=passage: ' --default-prompt query --out DIR";

// A generated fixture folder, removed at the end of the test.
class Folder {
 public:
  explicit Folder(std::string_view command, const std::string& tag)
      : dir_(fs::temp_directory_path() / ("warden-embed-api-" + std::to_string(::getpid()) + "-" + tag)) {
    fs::remove_all(dir_);
    testing::run_fixture_command(command, dir_);
  }
  ~Folder() { fs::remove_all(dir_); }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  [[nodiscard]] const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

embed::InputOptions prompt(std::string_view text) {
  embed::InputOptions o;
  o.prompt = text;
  return o;
}

std::vector<float> embed_prepared(const embed::Embedder& e, const std::vector<embed::PreparedInput>& inputs) {
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : inputs) ptrs.push_back(&p);
  std::vector<float> out(inputs.size() * e.dim());
  e.embed_prepared(ptrs, out);
  return out;
}

// "w0 w1 ... w{n-1}": every word is several wordpieces, so it is long in tokens.
std::string long_text(std::size_t words) {
  std::string s;
  for (std::size_t i = 0; i < words; ++i) {
    if (i > 0) s.push_back(' ');
    s.push_back('w');
    s.append(std::to_string(i));
  }
  return s;
}

std::vector<std::uint32_t> untruncated_ids(const embed::NeuralEmbedder& e, std::string_view text) {
  return e.tokenizer().encode(text, tokenizer::EncodeOptions{}, std::nullopt).ids;
}

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.what();
  }
  return "no error";
}

TEST(NeuralEmbedderApi, EmbedIsEmbedPreparedNormalised) {
  ThreadPool pool(2);
  const Folder f(kPrompted, "norm");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  const std::string_view texts[] = {"hello world", "a second, longer text to embed"};
  const Embeddings got = e.embed(texts);
  std::vector<float> raw = embed_prepared(e, {e.prepare(texts[0], {}), e.prepare(texts[1], {})});
  double norm0 = 0;
  for (std::size_t j = 0; j < e.dim(); ++j) norm0 += double(raw[j]) * double(raw[j]);
  EXPECT_GT(std::abs(std::sqrt(norm0) - 1.0), 1e-3) << "mean pooling is not unit length by itself";
  l2_normalize(raw, e.dim());
  for (std::size_t i = 0; i < raw.size(); ++i) ASSERT_NEAR(got.values()[i], raw[i], 1e-6) << i;
}

TEST(NeuralEmbedderApi, MixedBatchEqualsOneByOne) {
  ThreadPool pool(2);
  const Folder f(kPrompted, "mixed");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  embed::InputOptions left;
  left.side = embed::TruncationSide::Left;
  const std::vector<std::uint32_t> ids = e.prepare("hello", {}).ids;
  const std::vector<embed::PreparedInput> inputs{e.prepare("short", {}), e.prepare(long_text(400), left),
                                                 e.prepare("with a prompt", prompt("query: ")),
                                                 e.prepare_ids(ids, {}), e.prepare(long_text(300), {})};
  const std::vector<float> batch = embed_prepared(e, inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<float> alone = embed_prepared(e, {inputs[i]});
    for (std::size_t j = 0; j < e.dim(); ++j) ASSERT_NEAR(batch[i * e.dim() + j], alone[j], 1e-5) << i;
  }
}

TEST(NeuralEmbedderApi, TruncationSidesAndTheTooLongError) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "trunc");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  EXPECT_EQ(e.max_input_tokens(), 512U);
  const std::string text = long_text(400);
  const std::vector<std::uint32_t> full = untruncated_ids(e, text);
  ASSERT_GT(full.size(), 600U);

  const embed::PreparedInput right = e.prepare(text, {});
  embed::InputOptions left_options;
  left_options.side = embed::TruncationSide::Left;
  const embed::PreparedInput left = e.prepare(text, left_options);
  ASSERT_EQ(right.ids.size(), 512U);
  ASSERT_EQ(left.ids.size(), 512U);
  EXPECT_EQ(right.tokens, 512U);
  // Right keeps [CLS] + the first 510 text tokens + [SEP]; left keeps [CLS] + the last 510
  // text tokens + [SEP]: special tokens survive either way (HF semantics).
  EXPECT_TRUE(std::equal(full.begin(), full.begin() + 511, right.ids.begin()));
  EXPECT_EQ(right.ids.back(), full.back());
  EXPECT_EQ(left.ids.front(), full.front());
  EXPECT_TRUE(std::equal(full.end() - 511, full.end(), left.ids.begin() + 1));
  EXPECT_NE(left.ids, right.ids);
  const std::vector<float> both = embed_prepared(e, {left, right});
  EXPECT_FALSE(std::equal(both.begin(), both.begin() + 64, both.begin() + 64));

  embed::InputOptions strict;
  strict.truncate = false;
  const std::string message = error_of([&] { (void)e.prepare(text, strict); });
  EXPECT_EQ(message, "invalid_input: input has " + std::to_string(full.size()) +
                         " tokens, more than the model's maximum of 512");
  EXPECT_EQ(e.prepare("short enough", strict).ids, e.prepare("short enough", {}).ids);
}

TEST(NeuralEmbedderApi, PromptsArePrependedAndCounted) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "prompt");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  ASSERT_EQ(e.prompts().size(), 2U);
  EXPECT_EQ(e.prompts().at("query"), "query: ");
  EXPECT_EQ(e.default_prompt_name(), "query");

  const embed::PreparedInput p = e.prepare("hello world", prompt("query: "));
  EXPECT_EQ(p.ids, e.prepare("query: hello world", {}).ids);
  EXPECT_EQ(p.tokens, p.ids.size());
  EXPECT_EQ(p.prompt_tokens, 3U);  // [CLS] query :
  EXPECT_EQ(e.prepare("hello world", {}).prompt_tokens, 0U);
  // Left truncation eats the prompt first: what is left of it is counted.
  embed::InputOptions left = prompt("query: ");
  left.side = embed::TruncationSide::Left;
  EXPECT_EQ(e.prepare(long_text(400), left).prompt_tokens, 1U);  // [CLS] only
  EXPECT_EQ(e.prepare(long_text(400), prompt("query: ")).prompt_tokens, 3U);
}

TEST(NeuralEmbedderApi, IncludePromptFalseLeavesThePromptOutOfMeanPooling) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "include");
  const embed::NeuralEmbedder with(f.dir(), &pool);
  const fs::path pooling = f.dir() / "1_Pooling" / "config.json";
  const std::string config = read_file(pooling);
  const std::string_view key = "\"include_prompt\": true";
  const auto at = config.find(key);
  ASSERT_NE(at, std::string::npos) << config;
  write_file_atomic(pooling,
                    config.substr(0, at) + "\"include_prompt\": false" + config.substr(at + key.size()));
  const embed::NeuralEmbedder without(f.dir(), &pool);
  ASSERT_FALSE(without.model().pooling.include_prompt);

  const embed::PreparedInput p = without.prepare("hello world", prompt("query: "));
  ASSERT_EQ(p.prompt_tokens, 3U);
  const std::vector<float> got = embed_prepared(without, {p});
  const embed::PreparedInput* ptr = &p;
  const Embeddings states = without.embed_tokens(std::span(&ptr, 1)).at(0);
  ASSERT_EQ(states.rows(), p.ids.size());
  for (std::size_t j = 0; j < without.dim(); ++j) {
    double sum = 0;
    for (std::size_t t = p.prompt_tokens; t < states.rows(); ++t) sum += double(states.row(t)[j]);
    ASSERT_NEAR(got[j], sum / double(states.rows() - p.prompt_tokens), 1e-5) << j;
  }
  // With include_prompt (the default) the prompt's tokens are pooled too.
  const std::vector<float> pooled_all =
      embed_prepared(with, {with.prepare("hello world", prompt("query: "))});
  EXPECT_GT(std::abs(pooled_all[0] - got[0]) + std::abs(pooled_all[1] - got[1]), 1e-6);
  // No prompt: nothing is left out.
  const embed::PreparedInput plain = without.prepare("hello world", {});
  EXPECT_EQ(embed_prepared(without, {plain}), embed_prepared(with, {with.prepare("hello world", {})}));
}

TEST(NeuralEmbedderApi, EmbedTokensMeanIsTheMeanPooledVector) {
  ThreadPool pool(2);
  const Folder f(kPrompted, "tokens");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  ASSERT_EQ(e.model().pooling.mode, model::metadata::PoolingMode::Mean);
  const std::vector<embed::PreparedInput> inputs{e.prepare("one", {}), e.prepare("two words here", {})};
  const std::vector<float> pooled = embed_prepared(e, inputs);
  const std::vector<const embed::PreparedInput*> ptrs{&inputs[0], &inputs[1]};
  const std::vector<Embeddings> states = e.embed_tokens(ptrs);
  ASSERT_EQ(states.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(states[i].rows(), inputs[i].ids.size());
    ASSERT_EQ(states[i].dim(), e.dim());
    for (std::size_t j = 0; j < e.dim(); ++j) {
      double sum = 0;
      for (std::size_t t = 0; t < states[i].rows(); ++t) sum += double(states[i].row(t)[j]);
      ASSERT_NEAR(pooled[i * e.dim() + j], sum / double(states[i].rows()), 1e-5) << i << " " << j;
    }
  }
}

TEST(NeuralEmbedderApi, PrepareIdsChecksTheVocabularyAndTruncates) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "ids");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  const embed::PreparedInput from_text = e.prepare("hello world", {});
  const embed::PreparedInput from_ids = e.prepare_ids(from_text.ids, {});
  EXPECT_EQ(from_ids.ids, from_text.ids);
  EXPECT_EQ(from_ids.tokens, from_text.ids.size());
  EXPECT_EQ(embed_prepared(e, {from_ids}), embed_prepared(e, {from_text}));

  const std::uint32_t vocab = static_cast<std::uint32_t>(e.model().encoder.dims().vocab);
  const std::uint32_t bad[] = {101, vocab, 102};
  EXPECT_EQ(error_of([&] { (void)e.prepare_ids(bad, {}); }),
            "invalid_input: token id " + std::to_string(vocab) +
                " (position 1) is outside the vocabulary of " + std::to_string(vocab) + " tokens");
  EXPECT_EQ(error_of([&] { (void)e.prepare_ids({}, {}); }), "invalid_input: input has no token ids");
  EXPECT_NE(error_of([&] { (void)e.prepare_ids(from_text.ids, prompt("query: ")); }), "no error");

  std::vector<std::uint32_t> many(600);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::uint32_t>(1000 + i);
  EXPECT_EQ(e.prepare_ids(many, {}).ids, std::vector<std::uint32_t>(many.begin(), many.begin() + 512));
  embed::InputOptions left;
  left.side = embed::TruncationSide::Left;
  EXPECT_EQ(e.prepare_ids(many, left).ids, std::vector<std::uint32_t>(many.end() - 512, many.end()));
  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_EQ(error_of([&] { (void)e.prepare_ids(many, strict); }),
            "invalid_input: input has 600 tokens, more than the model's maximum of 512");
}

TEST(NeuralEmbedderApi, TokenizeGivesVocabularyTokensWithByteOffsets) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "tokenize");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  const std::string text = "unbelievable caf\xC3\xA9 tokens, ok";
  const std::vector<embed::TokenInfo> tokens = e.tokenize(text, {});
  ASSERT_GE(tokens.size(), 4U);
  EXPECT_EQ(tokens.front().text, "[CLS]");
  EXPECT_TRUE(tokens.front().special);
  EXPECT_FALSE(tokens.front().start.has_value());
  EXPECT_TRUE(tokens.back().special);
  EXPECT_EQ(e.prepare(text, {}).ids.size(), tokens.size());
  bool saw_continuation = false;
  for (std::size_t i = 1; i + 1 < tokens.size(); ++i) {
    const embed::TokenInfo& t = tokens[i];
    EXPECT_FALSE(t.special);
    EXPECT_EQ(e.prepare(text, {}).ids[i], t.id);
    ASSERT_TRUE(t.start && t.stop);
    const std::string slice = text.substr(*t.start, *t.stop - *t.start);
    std::string piece = t.text;
    if (piece.rfind("##", 0) == 0) {
      piece.erase(0, 2);
      saw_continuation = true;
    }
    // The uncased vocabulary strips accents: é is "e" in the token, "é" in the text.
    if (slice == "caf\xC3\xA9") continue;
    EXPECT_EQ(slice, piece) << i;
  }
  EXPECT_TRUE(saw_continuation);

  embed::InputOptions bare;
  bare.add_special_tokens = false;
  const std::vector<embed::TokenInfo> no_specials = e.tokenize(text, bare);
  EXPECT_EQ(no_specials.size(), tokens.size() - 2);
  EXPECT_FALSE(no_specials.front().special);

  // With a prompt the offsets index prompt + text.
  const std::vector<embed::TokenInfo> prompted = e.tokenize("hello", prompt("query: "));
  ASSERT_EQ(prompted.size(), 5U);  // [CLS] query : hello [SEP]
  EXPECT_EQ(prompted[3].text, "hello");
  EXPECT_EQ(prompted[3].start, 7U);
  EXPECT_EQ(prompted[3].stop, 12U);

  embed::InputOptions strict;
  strict.truncate = false;
  EXPECT_THROW((void)e.tokenize(long_text(400), strict), Error);
  EXPECT_EQ(e.tokenize(long_text(400), {}).size(), 512U);
}

TEST(NeuralEmbedderApi, DecodeRoundTrips) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "decode");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  const embed::PreparedInput p = e.prepare("hello world, unbelievable tokens", {});
  EXPECT_EQ(e.decode(p.ids, true), "hello world, unbelievable tokens");
  EXPECT_EQ(e.decode(p.ids, false), "[CLS] hello world, unbelievable tokens [SEP]");
  const std::uint32_t bad[] = {static_cast<std::uint32_t>(e.tokenizer().vocab_size()) + 5};
  EXPECT_EQ(error_of([&] { (void)e.decode(bad, true); }).rfind("invalid_input", 0), 0U);
}

// prepare() runs on several tokenization workers at once: one shared embedder, threads
// with different options, the same results as one thread.
TEST(NeuralEmbedderApi, PrepareIsThreadSafe) {
  ThreadPool pool(1);
  const Folder f(kPrompted, "threads");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  const std::string text = long_text(300);
  std::vector<embed::InputOptions> options(4);
  options[1].side = embed::TruncationSide::Left;
  options[2].prompt = "query: ";
  options[3].truncate = false;
  const std::vector<std::string> texts{text, "short text", "another one, with punctuation!"};
  std::vector<std::vector<std::uint32_t>> want;
  for (const auto& o : options) {
    for (const auto& t : texts) {
      if (!o.truncate && t == text) continue;
      want.push_back(e.prepare(t, o).ids);
    }
  }
  std::vector<int> mismatches(options.size(), 0);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < options.size(); ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 20; ++round) {
        std::size_t w = 0;
        for (const auto& o : options) {
          for (const auto& t : texts) {
            if (!o.truncate && t == text) continue;
            if (e.prepare(t, o).ids != want[w]) ++mismatches[k];
            ++w;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(NeuralEmbedderApi, FoldersWithoutPromptsHaveNone) {
  ThreadPool pool(1);
  const Folder f(
      "warden-fixture --arch distilbert --head none --preset tiny --seed 1 --pooling mean --out DIR",
      "noprompt");
  const embed::NeuralEmbedder e(f.dir(), &pool);
  EXPECT_TRUE(e.prompts().empty());
  EXPECT_FALSE(e.default_prompt_name().has_value());
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

// The guard's unknown-token rule (src/guard) reads this id: it must be the vocabulary's own
// [UNK], and text made of characters outside the vocabulary must tokenize to it.
TEST(NeuralEmbedderApi, UnknownTokenIdIsTheVocabularysUnk) {
  const Folder folder(kPrompted, "unk");
  const embed::NeuralEmbedder e(folder.dir(), nullptr);
  ASSERT_TRUE(e.unknown_token_id().has_value());
  EXPECT_EQ(e.unknown_token_id(), e.tokenizer().token_to_id("[UNK]"));
  const embed::PreparedInput p = e.prepare("\xe2\x98\x83", embed::InputOptions{});  // U+2603 SNOWMAN
  EXPECT_NE(std::find(p.ids.begin(), p.ids.end(), *e.unknown_token_id()), p.ids.end());
}

}  // namespace
}  // namespace warden

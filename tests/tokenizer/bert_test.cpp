// BERT WordPiece against HF `tokenizers`: every line of the shared reference files.

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/file.hpp"
#include "reference_util.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden {
namespace {

const tokenizer::Tokenizer& bert() {
  static const tokenizer::Tokenizer tok =
      tokenizer::Tokenizer::from_file(test::test_data("bert-base-uncased-tokenizer.json"));
  return tok;
}

TEST(BertTokenizer, ReproducesEveryReferenceLine) {
  const auto cases = test::load_reference(test::test_data("bert-wordpiece-reference.jsonl"));
  ASSERT_EQ(cases.size(), 197U);
  int failures = 0;
  for (const auto& c : cases) {
    const tokenizer::EncodeOptions opts{true, true};
    const tokenizer::Encoding e =
        c.pair ? bert().encode_pair(c.text, *c.pair, opts) : bert().encode(c.text, opts);
    const std::string why = test::compare(c, e);
    if (!why.empty()) {
      ++failures;
      ADD_FAILURE() << "mismatch in" << why << " for " << fmt::format("{:?}", c.text)
                    << (c.pair ? fmt::format(" / {:?}", *c.pair) : "") << "\n got ids "
                    << fmt::format("{}", e.ids) << "\n want    " << fmt::format("{}", c.ids)
                    << "\n got tokens " << fmt::format("{}", e.tokens) << "\n got offs "
                    << fmt::format("{}", e.char_offsets.size());
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(BertTokenizer, ReproducesLlamaCppVectors) {
  const std::string inp = read_file(test::test_data("ggml-vocab-bert-bge.gguf.inp"));
  const std::string out = read_file(test::test_data("ggml-vocab-bert-bge.gguf.out"));
  std::vector<std::string> inputs;
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = inp.find(sep, pos);
    if (hit == std::string::npos) {
      if (pos < inp.size()) inputs.push_back(inp.substr(pos));
      break;
    }
    inputs.push_back(inp.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  std::vector<std::vector<std::uint32_t>> expected;
  pos = 0;
  while (pos < out.size()) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    std::vector<std::uint32_t> ids;
    std::size_t i = pos;
    while (i < nl) {
      while (i < nl && out[i] == ' ') ++i;
      if (i >= nl) break;
      std::uint32_t v = 0;
      while (i < nl && out[i] >= '0' && out[i] <= '9')
        v = v * 10 + static_cast<std::uint32_t>(out[i++] - '0');
      ids.push_back(v);
    }
    expected.push_back(std::move(ids));
    pos = nl + 1;
  }
  ASSERT_EQ(inputs.size(), expected.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const tokenizer::Encoding e = bert().encode(inputs[k], tokenizer::EncodeOptions{false, false});
    EXPECT_EQ(e.ids, expected[k]) << "input " << k << ": " << fmt::format("{:?}", inputs[k]);
  }
}

TEST(BertTokenizer, LegacyVocabTxtMatchesTokenizerJson) {
  const tokenizer::Tokenizer legacy =
      tokenizer::Tokenizer::from_bert_vocab(test::test_data("bert-base-uncased-vocab.txt"));
  const auto cases = test::load_reference(test::test_data("bert-wordpiece-reference.jsonl"));
  for (const auto& c : cases) {
    if (c.ids.size() >= 512) continue;  // the legacy path has no max length without a config
    const tokenizer::Encoding e = c.pair ? legacy.encode_pair(c.text, *c.pair) : legacy.encode(c.text);
    EXPECT_EQ(e.ids, c.ids) << c.text;
    EXPECT_EQ(e.type_ids, c.type_ids) << c.text;
  }
}

TEST(BertTokenizer, ByteOffsetsPointIntoTheText) {
  const std::string text = "Café 東京 ok";
  const tokenizer::Encoding e = bert().encode(text, tokenizer::EncodeOptions{false, true});
  ASSERT_EQ(e.tokens, (std::vector<std::string>{"cafe", "東", "京", "ok"}));
  EXPECT_EQ(text.substr(e.offsets[0].begin, e.offsets[0].end - e.offsets[0].begin), "Café");
  EXPECT_EQ(text.substr(e.offsets[1].begin, e.offsets[1].end - e.offsets[1].begin), "東");
  EXPECT_EQ(e.char_offsets[3], (tokenizer::Offset{8, 10}));
  EXPECT_EQ(e.offsets[3], (tokenizer::Offset{13, 15}));
}

TEST(BertTokenizer, RejectsInvalidUtf8) {
  try {
    (void)bert().encode("ab\xFF");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("offset 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)bert().encode("\xED\xA0\x80"), Error);  // a lone surrogate in UTF-8
}

TEST(BertTokenizer, DecodesWithTheWordPieceDecoder) {
  const tokenizer::Encoding e = bert().encode("Hello, unaffable world!");
  EXPECT_EQ(bert().decode(e.ids), "hello, unaffable world!");
  EXPECT_EQ(bert().decode(e.ids, false), "[CLS] hello, unaffable world! [SEP]");
  EXPECT_EQ(bert().token_to_id("[CLS]"), 101U);
  EXPECT_EQ(bert().id_to_token(7592), "hello");
  EXPECT_EQ(bert().vocab_size(), 30522U);
  const std::vector<std::uint32_t> bad{999999};
  EXPECT_THROW((void)bert().decode(bad), Error);
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

TEST(BertTokenizer, LegacyConfigIsHonoured) {
  const auto dir = std::filesystem::temp_directory_path() / ("warden-tok-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(test::test_data("bert-base-uncased-vocab.txt"), dir / "vocab.txt",
                             std::filesystem::copy_options::overwrite_existing);
  write_file_atomic(dir / "tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 6})");
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_directory(dir);
  const tokenizer::Encoding e =
      tok.encode("Hello world and more words here", tokenizer::EncodeOptions{true, true});
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"[CLS]", "[UNK]", "world", "and", "more", "[SEP]"}));
  // A per-call truncation replaces the configured one (the tokenizer itself is untouched).
  tokenizer::TruncationParams left;
  left.max_length = 5;
  left.direction = tokenizer::Direction::Left;
  EXPECT_EQ(tok.encode("Hello world and more words here", tokenizer::EncodeOptions{true, true}, left).tokens,
            (std::vector<std::string>{"[CLS]", "more", "words", "here", "[SEP]"}));
  EXPECT_EQ(tok.encode("Hello world and more words here", tokenizer::EncodeOptions{true, false}, std::nullopt)
                .ids.size(),
            8U);
  EXPECT_EQ(tok.encode("Hello world and more words here", tokenizer::EncodeOptions{true, true}).tokens,
            e.tokens);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden

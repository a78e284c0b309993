// A truncating encode reads only a window of a long text (tokenizer/text_window.hpp): it
// must give exactly what encoding the whole text and then truncating gives — ids, type ids,
// offsets, special tokens — for every tokenizer family, both directions, single texts and
// pairs; and a normalisation bomb costs what the kept tokens cost, not what the text does.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/file.hpp"
#include "reference_util.hpp"
#include "tokenizer/text_window.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden {
namespace {

// Long texts of every shape: the reference corpora run together, one word without spaces,
// CJK, combining marks, a normalisation bomb, whitespace runs.
std::vector<std::string> long_texts() {
  std::string corpus;
  for (const char* f : {"tokref/bpe-roberta.jsonl", "tokref/unigram-xlmr.jsonl", "tokref/bpe-qwen3.jsonl"}) {
    simdjson::dom::parser parser;
    const std::string lines = read_file(test::test_data(f));
    std::size_t start = 0;
    while (start < lines.size()) {
      const std::size_t end = lines.find('\n', start);
      const simdjson::dom::element doc = parser.parse(lines.substr(start, end - start));
      corpus += std::string(std::string_view(doc["text"])) + (corpus.size() % 3 == 0 ? "\n" : " ");
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  auto grow = [](const std::string& unit, std::size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += unit;
    return s;
  };
  // Past kWholeTextBytes, so that they are read in windows.
  return {grow(corpus, 100000),
          grow("abcdefghij", 40000),
          grow("\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x80\x82", 40000),
          grow("e\xCC\x81 ", 40000),
          grow("\xEF\xB7\xBA", 60000),  // U+FDFA: 18 code points under NFKC
          grow("word   \t\n  ", 40000)};
}

// The encoding's ids, type ids, offsets and special mask, as one comparable value.
struct View {
  std::vector<std::uint32_t> ids, type_ids;
  std::vector<tokenizer::Offset> offsets, char_offsets;
  std::vector<std::uint8_t> special;
  friend bool operator==(const View&, const View&) = default;
};
View view(const tokenizer::Encoding& e) {
  return {e.ids, e.type_ids, e.offsets, e.char_offsets, e.special_tokens_mask};
}

// The same call with every text read whole: what truncating after encoding the whole text
// gives (HF's order: truncation, then the post-processor).
tokenizer::Encoding whole_text_encode(const tokenizer::Tokenizer& tok, std::string_view a,
                                      const std::string_view* b, const tokenizer::TruncationParams& params) {
  tokenizer::detail::set_text_windows(false);
  tokenizer::Encoding e = b == nullptr
                              ? tok.encode(a, tokenizer::EncodeOptions{true, false}, params)
                              : tok.encode_pair(a, *b, tokenizer::EncodeOptions{true, false}, params);
  tokenizer::detail::set_text_windows(true);
  return e;
}

TEST(TextWindow, TruncatingAWindowEqualsTruncatingTheWholeText) {
  const std::vector<std::string> texts = long_texts();
  for (const std::string& file : test::tokenizer_families()) {
    tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_file(test::test_data(file));
    tok.set_padding(std::nullopt);
    for (std::size_t t = 0; t < texts.size(); ++t) {
      for (const std::size_t max : {16U, 128U, 512U}) {
        for (const tokenizer::Direction side : {tokenizer::Direction::Right, tokenizer::Direction::Left}) {
          SCOPED_TRACE(file + " text " + std::to_string(t) + " max " + std::to_string(max) +
                       (side == tokenizer::Direction::Right ? " right" : " left"));
          tokenizer::TruncationParams params;
          params.max_length = max;
          params.direction = side;
          const tokenizer::Encoding got = tok.encode(texts[t], tokenizer::EncodeOptions{true, false}, params);
          const View want = view(whole_text_encode(tok, texts[t], nullptr, params));
          EXPECT_TRUE(view(got) == want);
          if (!(view(got) == want)) {
            for (std::size_t i = 0; i < std::min(got.size(), want.ids.size()); ++i) {
              if (got.ids[i] != want.ids[i] || got.offsets[i] != want.offsets[i]) {
                ADD_FAILURE() << "first difference at " << i << " of " << got.size() << "/" << want.ids.size()
                              << ": id " << got.ids[i] << " vs " << want.ids[i] << ", offset "
                              << got.offsets[i].begin << "-" << got.offsets[i].end << " vs "
                              << want.offsets[i].begin << "-" << want.offsets[i].end;
                break;
              }
            }
          }
        }
      }
    }
  }
}

TEST(TextWindow, PairsTruncateAsTheWholeTextsDo) {
  // A long text with a short one, either way round: exactly the whole texts' answer. Two long
  // ones: each side keeps a prefix (Right) or suffix (Left) of its own encoding, the budget
  // shared as longest_first shares it (the odd token may go to either: text_window.hpp).
  const std::vector<std::string> texts = long_texts();
  for (const std::string& file :
       {std::string("bert-base-uncased-tokenizer.json"), std::string("tokref/bpe-roberta.json"),
        std::string("tokref/unigram-xlmr.json"), std::string("tokref/bpe-bytelevel-template.json")}) {
    const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_file(test::test_data(file));
    for (const tokenizer::Direction side : {tokenizer::Direction::Right, tokenizer::Direction::Left}) {
      SCOPED_TRACE(file + (side == tokenizer::Direction::Right ? " right" : " left"));
      tokenizer::TruncationParams params;
      params.max_length = 128;
      params.direction = side;
      for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
               {texts[0], "a short question?"}, {"a short question?", texts[0]}, {texts[4], "ok"}}) {
        const tokenizer::Encoding got = tok.encode_pair(a, b, tokenizer::EncodeOptions{true, false}, params);
        const std::string_view second = b;
        EXPECT_TRUE(view(got) == view(whole_text_encode(tok, a, &second, params)));
      }
      const tokenizer::Encoding both =
          tok.encode_pair(texts[0], texts[3], tokenizer::EncodeOptions{true, false}, params);
      const std::string_view second = texts[3];
      const tokenizer::Encoding want = whole_text_encode(tok, texts[0], &second, params);
      ASSERT_EQ(both.size(), want.size());
      for (const std::int8_t seq : {std::int8_t{0}, std::int8_t{1}}) {
        const tokenizer::Encoding whole =
            tok.encode(seq == 0 ? texts[0] : texts[3], tokenizer::EncodeOptions{false, false}, std::nullopt);
        std::vector<std::uint32_t> kept;
        for (std::size_t i = 0; i < both.size(); ++i) {
          if (both.sequence_ids[i] == seq) kept.push_back(both.ids[i]);
        }
        ASSERT_LE(kept.size(), whole.ids.size());
        ASSERT_GE(kept.size(), 60U);
        const auto from =
            side == tokenizer::Direction::Right ? whole.ids.begin() : whole.ids.end() - kept.size();
        EXPECT_TRUE(std::equal(kept.begin() + 1, kept.end() - 1, from + 1)) << int(seq);
      }
    }
  }
}

TEST(TextWindow, ANormalisationBombCostsWhatIsKept) {
  // U+FDFA is 18 code points under NFKC. Where the kept tokens fill a window, 2 MB of it
  // costs what 64 KB does (a ratio, so that it holds under sanitizers); where they do not (a
  // tokenizer that reads it as one unknown word), the text is read whole, as before.
  auto bomb = [](std::size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += "\xEF\xB7\xBA";
    return s;
  };
  const std::string small = bomb(64U << 10), large = bomb(2U << 20);
  std::size_t windowed = 0;
  for (const std::string& file : test::tokenizer_families()) {
    const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_file(test::test_data(file));
    tokenizer::TruncationParams params;
    params.max_length = 128;
    auto seconds = [&](const std::string& text) {
      const auto t0 = std::chrono::steady_clock::now();
      const tokenizer::Encoding e = tok.encode(text, tokenizer::EncodeOptions{true, false}, params);
      EXPECT_LE(e.size(), 128U) << file;
      return std::make_pair(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                            e.size());
    };
    (void)seconds(small);  // warm the workspace
    const auto [ts, n] = seconds(small);
    if (n < 128) continue;
    ++windowed;
    double tl = seconds(large).first;
    for (int k = 0; k < 3 && tl >= 4 * ts + 0.02; ++k) tl = std::min(tl, seconds(large).first);
    EXPECT_LT(tl, 4 * ts + 0.02) << file << ": 64 KB " << ts << " s, 2 MB " << tl << " s";
  }
  EXPECT_GE(windowed, 8U);
}

TEST(TextWindow, WindowsCutBetweenWords) {
  using tokenizer::detail::text_window;
  const std::string text = "alpha beta gamma delta";
  EXPECT_EQ(text_window(text, 12, tokenizer::Direction::Right).end, 10U);   // "alpha beta"
  EXPECT_EQ(text_window(text, 12, tokenizer::Direction::Left).begin, 10U);  // " gamma delta", from a space
  const std::string cjk = "\xE6\x9D\xB1\xE4\xBA\xAC\xE6\x9D\xB1\xE4\xBA\xAC";
  EXPECT_EQ(text_window(cjk, 7, tokenizer::Direction::Right).end, 6U);  // a code point boundary
  EXPECT_EQ(text_window(cjk, 7, tokenizer::Direction::Left).begin, 6U);
}

}  // namespace
}  // namespace warden

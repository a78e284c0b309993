#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "core/error.hpp"
#include "tokenizer/use_lite_tokenizer.hpp"
#include "use_lite/use_lite_reference.hpp"

namespace warden {
namespace {

const tokenizer::UseLiteTokenizer& tokenizer() {
  static const tokenizer::UseLiteTokenizer t =
      tokenizer::UseLiteTokenizer::from_file(test::use_lite_test_model() / "vocab.json");
  return t;
}

// A long text is read in a window when only 128 ids are kept: the kept ids are those of
// the whole text, either end, for every reference sentence run together, CJK, a word with no
// space, and a normalisation bomb — which costs milliseconds instead of seconds and a GB.
TEST(UseLiteTokenizer, KeptIdsOfAWindowAreThoseOfTheWholeText) {
  std::string corpus;
  for (const auto& c : test::load_use_lite_cases("use-lite-tokenizer-reference.jsonl"))
    corpus += c.text + " ";
  auto grow = [](const std::string& unit, std::size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += unit;
    return s;
  };
  for (const std::string& text : {grow(corpus, 200000), grow("\xE6\x9D\xB1\xE4\xBA\xAC", 60000),
                                  grow("abcdefg", 60000), grow("\xEF\xB7\xBA", 60000)}) {
    const std::vector<std::uint32_t> whole = tokenizer().encode(text);
    for (const tokenizer::Direction side : {tokenizer::Direction::Right, tokenizer::Direction::Left}) {
      bool windowed = false;
      const std::vector<std::uint32_t> kept = tokenizer().encode_kept(text, 128, side, &windowed);
      // (A run of unknown characters is one id: the CJK text has 2.)
      const auto k = static_cast<std::ptrdiff_t>(std::min<std::size_t>(128, whole.size()));
      ASSERT_GE(kept.size(), static_cast<std::size_t>(k));
      if (side == tokenizer::Direction::Right) {
        EXPECT_TRUE(std::equal(kept.begin(), kept.begin() + k, whole.begin())) << text.substr(0, 20);
      } else {
        EXPECT_TRUE(std::equal(kept.end() - k, kept.end(), whole.end() - k)) << text.substr(0, 20);
      }
    }
  }
  // The bomb of the report: 2 MB of U+FDFA costs what 64 KB does (a ratio, so that it
  // holds under sanitizers; the whole text took 6-7 s and 1.1 GB).
  auto seconds = [](const std::string& text) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_GE(tokenizer().encode_kept(text, 128, tokenizer::Direction::Right).size(), 128U);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const std::string small = grow("\xEF\xB7\xBA", 64U << 10), large = grow("\xEF\xB7\xBA", 2U << 20);
  (void)seconds(small);
  const double ts = seconds(small);
  double tl = seconds(large);
  for (int k = 0; k < 3 && tl >= 4 * ts + 0.02; ++k) tl = std::min(tl, seconds(large));
  EXPECT_LT(tl, 4 * ts + 0.02) << "64 KB " << ts << " s, 2 MB " << tl << " s";
}

// Every line of the TF.js reference tokenizer's output: 349 texts (the 60 embedding
// sentences, ~140 edge cases around colons, "”5", ties, whitespace, NFKC, emoji and
// control characters, and 150 random strings).
TEST(UseLiteTokenizer, ReproducesEveryReferenceLine) {
  const auto cases = test::load_use_lite_cases("use-lite-tokenizer-reference.jsonl");
  ASSERT_EQ(cases.size(), 349U);
  std::size_t same = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const auto ids = tokenizer().encode(c.text);
    EXPECT_EQ(ids, c.ids) << "line " << i + 1 << ": " << c.text;
    ASSERT_EQ(c.pieces.size(), c.ids.size()) << "line " << i + 1;
    bool pieces_ok = ids.size() == c.ids.size();
    for (std::size_t k = 0; pieces_ok && k < ids.size(); ++k)
      pieces_ok = tokenizer().piece(ids[k]) == c.pieces[k];
    EXPECT_TRUE(pieces_ok) << "line " << i + 1 << ": pieces differ";
    same += ids == c.ids ? 1 : 0;
  }
  EXPECT_EQ(same, cases.size());
}

TEST(UseLiteTokenizer, EmbeddingReferenceIdsToo) {
  const auto cases = test::load_use_lite_cases("use-lite-reference.jsonl");
  ASSERT_EQ(cases.size(), 60U);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(tokenizer().encode(cases[i].text), cases[i].ids) << "line " << i + 1;
  }
}

TEST(UseLiteTokenizer, DocumentedQuirks) {
  using Ids = std::vector<std::uint32_t>;
  EXPECT_EQ(tokenizer().encode(""), Ids{});
  EXPECT_EQ(tokenizer().encode("a"), (Ids{11}));
  EXPECT_EQ(tokenizer().encode(" "), (Ids{30, 30}));
  EXPECT_EQ(tokenizer().encode("\t"), (Ids{30, 0}));
  EXPECT_EQ(tokenizer().encode(":"), (Ids{30, 57}));           // best == 0 counts as unset
  EXPECT_EQ(tokenizer().encode(":)"), (Ids{30, 57, 52}));      // not "▁:)"
  EXPECT_EQ(tokenizer().encode("\xef\xac\x81"), (Ids{1480}));  // "ﬁ" -> NFKC "fi" -> "▁fi"
  EXPECT_EQ(tokenizer().encode("\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"),
            (Ids{30, 0}));  // unknowns merge
  EXPECT_EQ(tokenizer().piece(4464),
            "\xe2\x80\x9d"
            "5");  // "”5", listed three times: the last id wins
}

TEST(UseLiteTokenizer, RejectsInvalidUtf8AndBadVocabularies) {
  EXPECT_THROW((void)tokenizer().encode("bad \xC0\xAF"), Error);
  EXPECT_THROW((void)tokenizer::UseLiteTokenizer::from_json("{}", "v"), Error);
  EXPECT_THROW((void)tokenizer::UseLiteTokenizer::from_json("[[\"a\", 1]]", "v"), Error);  // too few pieces
  EXPECT_THROW((void)tokenizer::UseLiteTokenizer::from_json(
                   R"([["x",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["a","high"]])", "v"),
               Error);
  // A null score counts as 0, and a best score of 0 counts as "unset": node 1 of "▁a" has
  // no edge ending there (best 0), so "a" (0 + 0) beats "▁a" (-1) and the backtrack then
  // emits node 1's unset word, the unknown id: the reference does exactly this.
  const auto quirky = tokenizer::UseLiteTokenizer::from_json(
      R"([["x",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["\u2581a",-1],["a",null]])", "v");
  EXPECT_EQ(quirky.encode("a"), (std::vector<std::uint32_t>{0, 7}));
  const auto plain = tokenizer::UseLiteTokenizer::from_json(
      R"([["x",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["\u2581a",-1],["a",-5]])", "v");
  EXPECT_EQ(plain.encode("a"), (std::vector<std::uint32_t>{6}));
}

// encode_with_offsets: the same ids as encode() on every reference line; the spans are in
// order inside the text; on ASCII lines (NFKC changes nothing) without unknown pieces, each
// span is its piece with "▁" read as a space (the first piece's added "▁" covering nothing),
// so the spans put together give the text back.
TEST(UseLiteTokenizer, OffsetsCoverTheTextInOrder) {
  const auto cases = test::load_use_lite_cases("use-lite-tokenizer-reference.jsonl");
  std::size_t checked = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string& text = cases[i].text;
    const auto tokens = tokenizer().encode_with_offsets(text);
    const auto ids = tokenizer().encode(text);
    ASSERT_EQ(tokens.size(), ids.size()) << "line " << i + 1;
    // Pieces inside one character that NFKC expands ("½" -> "1⁄2") share its span, so
    // spans may overlap; they never go backwards.
    std::uint32_t previous_begin = 0;
    std::uint32_t previous_end = 0;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      EXPECT_EQ(tokens[k].id, ids[k]) << "line " << i + 1;
      EXPECT_LE(tokens[k].begin, tokens[k].end) << "line " << i + 1;
      EXPECT_LE(tokens[k].end, text.size()) << "line " << i + 1;
      EXPECT_GE(tokens[k].begin, previous_begin) << "line " << i + 1 << " token " << k;
      EXPECT_GE(tokens[k].end, previous_end) << "line " << i + 1 << " token " << k;
      previous_begin = tokens[k].begin;
      previous_end = tokens[k].end;
    }
    const bool ascii = std::all_of(text.begin(), text.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x80 && static_cast<unsigned char>(c) >= 0x20;
    });
    if (!ascii || std::find(ids.begin(), ids.end(), tokenizer::UseLiteTokenizer::kUnknownId) != ids.end())
      continue;
    std::string joined;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      // "▁" -> " ", and the first piece's leading "▁" (the added one) -> nothing.
      const std::string_view mark = "\u2581";
      const std::string& raw = tokenizer().piece(tokens[k].id);
      std::string piece;
      for (std::size_t at = 0; at < raw.size();) {
        if (raw.compare(at, mark.size(), mark) == 0) {
          if (!(k == 0 && at == 0)) piece.push_back(' ');
          at += mark.size();
        } else {
          piece.push_back(raw[at++]);
        }
      }
      const std::string slice = text.substr(tokens[k].begin, tokens[k].end - tokens[k].begin);
      EXPECT_EQ(slice, piece) << "line " << i + 1 << " token " << k;
      joined += slice;
    }
    EXPECT_EQ(joined, text) << "line " << i + 1;
    ++checked;
  }
  EXPECT_GT(checked, 50U);
  // NFKC: "ﬁ" is one character of three bytes that becomes "fi": the piece covers all of it.
  const auto fi = tokenizer().encode_with_offsets("\xef\xac\x81");
  ASSERT_EQ(fi.size(), 1U);
  EXPECT_EQ(fi[0].begin, 0U);
  EXPECT_EQ(fi[0].end, 3U);
  // "½ cup": "▁1" "⁄" "2" all come from "½" (two bytes); "▁cup" is " cup".
  const auto half = tokenizer().encode_with_offsets("\xc2\xbd cup");
  ASSERT_EQ(half.size(), 4U);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(half[k].begin, 0U);
    EXPECT_EQ(half[k].end, 2U);
  }
  EXPECT_EQ(half[3].begin, 2U);
  EXPECT_EQ(half[3].end, 6U);
}

TEST(UseLiteTokenizer, LongHostileInputIsLinear) {
  const std::string text(200000, ':');
  const auto ids = tokenizer().encode(text);
  EXPECT_FALSE(ids.empty());
}

}  // namespace
}  // namespace warden

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tokenizer/use_lite_tokenizer.hpp"
#include "use_lite/use_lite_reference.hpp"

namespace warden {
namespace {

const UseLiteTokenizer& tokenizer() {
  static const UseLiteTokenizer t = UseLiteTokenizer::from_file(test::use_lite_test_model() / "vocab.json");
  return t;
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
  EXPECT_THROW((void)UseLiteTokenizer::from_json("{}", "v"), Error);
  EXPECT_THROW((void)UseLiteTokenizer::from_json("[[\"a\", 1]]", "v"), Error);  // too few pieces
  EXPECT_THROW((void)UseLiteTokenizer::from_json(
                   R"([["x",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["a","high"]])", "v"),
               Error);
  // A null score counts as 0, and a best score of 0 counts as "unset": node 1 of "▁a" has
  // no edge ending there (best 0), so "a" (0 + 0) beats "▁a" (-1) and the backtrack then
  // emits node 1's unset word, the unknown id: the reference does exactly this.
  const auto quirky = UseLiteTokenizer::from_json(
      R"([["x",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["\u2581a",-1],["a",null]])", "v");
  EXPECT_EQ(quirky.encode("a"), (std::vector<std::uint32_t>{0, 7}));
  const auto plain = UseLiteTokenizer::from_json(
      R"([["x",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["\u2581a",-1],["a",-5]])", "v");
  EXPECT_EQ(plain.encode("a"), (std::vector<std::uint32_t>{6}));
}

TEST(UseLiteTokenizer, LongHostileInputIsLinear) {
  const std::string text(200000, ':');
  const auto ids = tokenizer().encode(text);
  EXPECT_FALSE(ids.empty());
}

}  // namespace
}  // namespace warden

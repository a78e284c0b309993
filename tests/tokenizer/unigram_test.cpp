// Unigram (Viterbi, NFKC, Metaspace) against HF `tokenizers`: every line of the reference.

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference_util.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden {
namespace {

TEST(UnigramTokenizer, ReproducesEveryReferenceLine) {
  const tokenizer::Tokenizer tok =
      tokenizer::Tokenizer::from_file(test::test_data("unigram-use-vocab-tokenizer.json"));
  const auto cases = test::load_reference(test::test_data("unigram-reference.jsonl"));
  ASSERT_EQ(cases.size(), 110U);
  int failures = 0;
  for (const auto& c : cases) {
    const tokenizer::Encoding e = tok.encode(c.text, tokenizer::EncodeOptions{false, true});
    const std::string why = test::compare(c, e);
    if (!why.empty()) {
      ++failures;
      std::vector<std::string> offs;
      for (const auto& o : e.char_offsets) offs.push_back(fmt::format("[{},{}]", o.begin, o.end));
      ADD_FAILURE() << "mismatch in" << why << " for " << fmt::format("{:?}", c.text) << "\n got ids "
                    << fmt::format("{}", e.ids) << "\n want    " << fmt::format("{}", c.ids)
                    << "\n got tokens " << fmt::format("{}", e.tokens) << "\n want      "
                    << fmt::format("{}", c.tokens) << "\n got offs " << fmt::format("{}", offs);
    }
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace warden

#pragma once
// Patterns for Split / Replace: a literal string, or a regex in the Oniguruma dialect HF
// tokenizer.json files use (GPT-2's `'s|'t|...| ?\p{L}+|...`, `\s+(?!\S)`, (?i:...)).
// The regex engine is our own small backtracking matcher over code points: std::regex has
// no \p{..} classes and is slow, and the patterns in tokenizer files are short.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace warden::tokenizer::detail {

class Pattern {
 public:
  virtual ~Pattern() = default;
  // Appends [begin, end) byte pairs of every non-overlapping, non-empty match, left to right.
  virtual void find_all(std::string_view text, std::vector<std::uint32_t>& out) const = 0;
};

std::unique_ptr<Pattern> make_string_pattern(std::string literal);
// Throws Error(Unsupported) naming the construct it does not support.
std::unique_ptr<Pattern> make_regex_pattern(std::string_view regex);

}  // namespace warden::tokenizer::detail

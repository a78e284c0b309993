// Added tokens ([CLS], <s>, user-added words) are found in the text before the normalizer
// and the model run, exactly as HF's AddedVocabulary does: leftmost match, longest first,
// with the lstrip / rstrip / single_word options.

#include <algorithm>

#include "core/utf8.hpp"
#include "tokenizer/internal.hpp"
#include "tokenizer/unicode.hpp"

namespace warden::tokenizer::detail {

namespace {

char32_t last_char(std::string_view s) {
  std::size_t p = s.size();
  while (p > 0 && (static_cast<unsigned char>(s[p - 1]) & 0xC0U) == 0x80U) --p;
  if (p > 0) --p;
  std::size_t q = p;
  return utf8::next(s, q);
}

bool is_word_char(char32_t c) {
  return c == '_' || uni::is_alphanumeric(c);
}

// Byte index where the trailing whitespace of s begins.
std::size_t space_leftmost_at_end(std::string_view s) {
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t p = end - 1;
    while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0U) == 0x80U) --p;
    std::size_t q = p;
    if (!uni::is_whitespace(utf8::next(s, q))) break;
    end = p;
  }
  return end;
}

// Length of the leading whitespace of s.
std::size_t space_rightmost_at_start(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t q = pos;
    if (!uni::is_whitespace(utf8::next(s, q))) break;
    pos = q;
  }
  return pos;
}

}  // namespace

void AddedMatcher::build(const std::vector<AddedToken>& tokens, bool normalized_set) {
  // Note: `contents_` of normalized tokens are filled by the caller (normalized text).
  patterns_.clear();
  for (const auto& t : tokens) {
    if (t.normalized != normalized_set || t.content.empty()) continue;
    patterns_.push_back(Pattern{t.content, &t});
  }
  std::stable_sort(patterns_.begin(), patterns_.end(), [](const Pattern& a, const Pattern& b) {
    const auto fa = static_cast<unsigned char>(a.content[0]);
    const auto fb = static_cast<unsigned char>(b.content[0]);
    if (fa != fb) return fa < fb;
    return a.content.size() > b.content.size();
  });
  std::fill(std::begin(begin_), std::end(begin_), 0U);
  std::size_t i = 0;
  for (unsigned b = 0; b < 256; ++b) {
    begin_[b] = static_cast<std::uint32_t>(i);
    while (i < patterns_.size() && static_cast<unsigned char>(patterns_[i].content[0]) == b) ++i;
  }
  begin_[256] = static_cast<std::uint32_t>(patterns_.size());
}

void AddedMatcher::split(std::string_view s, std::vector<Piece>& out) const {
  std::size_t start_offset = 0;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const auto b = static_cast<unsigned char>(s[pos]);
    const std::uint32_t lo = begin_[b];
    const std::uint32_t hi = begin_[b + 1];
    const Pattern* hit = nullptr;
    for (std::uint32_t k = lo; k < hi; ++k) {
      const auto& c = patterns_[k].content;
      if (s.size() - pos >= c.size() && s.compare(pos, c.size(), c) == 0) {
        hit = &patterns_[k];
        break;
      }
    }
    if (hit == nullptr) {
      ++pos;
      continue;
    }
    std::size_t start = pos;
    std::size_t stop = pos + hit->content.size();
    const AddedToken& tok = *hit->token;
    if (tok.single_word) {
      const bool start_space = start == 0 || !is_word_char(last_char(s.substr(0, start)));
      std::size_t q = stop;
      const bool stop_space = stop == s.size() || !is_word_char(utf8::next(s, q));
      if (!start_space || !stop_space) {
        pos = stop;  // HF's automaton has consumed the match either way
        continue;
      }
    }
    if (tok.lstrip) start = std::max(space_leftmost_at_end(s.substr(0, start)), start_offset);
    if (tok.rstrip) stop += space_rightmost_at_start(s.substr(stop));
    if (start_offset < start) {
      out.push_back(
          Piece{static_cast<std::uint32_t>(start_offset), static_cast<std::uint32_t>(start), -1, {}});
    }
    out.push_back(Piece{static_cast<std::uint32_t>(start),
                        static_cast<std::uint32_t>(stop),
                        static_cast<std::int32_t>(tok.id),
                        {}});
    start_offset = stop;
    pos = stop;
  }
  if (start_offset < s.size()) {
    out.push_back(
        Piece{static_cast<std::uint32_t>(start_offset), static_cast<std::uint32_t>(s.size()), -1, {}});
  }
}

}  // namespace warden::tokenizer::detail

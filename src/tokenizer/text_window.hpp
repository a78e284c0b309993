#pragma once
// A truncating model reads only so many tokens of a text, so a long text is tokenized only
// as far as those need: a window at the kept end, grown (doubling) until it holds enough
// tokens. Without it a 2 MB request of characters that normalisation multiplies (U+FDFA is 18
// code points under NFKC) cost seconds and a gigabyte to keep 128 tokens.
//
// The window is cut between words (just before a whitespace byte when keeping the start, at
// one when keeping the end), so the tokens of the words it holds are the ones the whole
// text gives, and a margin of tokens nearest the cut is never kept (a cut inside a word, or
// a normaliser or pre-tokenizer that looks across the cut, only touches those). Work and
// memory grow with what is kept, not with the text; a text that yields too few tokens is
// tokenized whole, as before.
//
// Texts up to kWholeTextBytes are always read whole: ordinary inputs get exactly HF's
// answer. The one thing a window cannot tell is which of two texts of a pair has more
// tokens when both have more than the model reads; longest_first gives an odd budget's extra
// token to the longer one, so for a pair of two texts over kWholeTextBytes that both exceed
// the budget, that one token may go to the other text.

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "tokenizer/tokenizer.hpp"

namespace warden::tokenizer::detail {

// The tokens nearest the cut that are never kept.
inline constexpr std::size_t kWindowMarginTokens = 32;
// Texts up to this size are read whole (8,000 tokens of English: past every encoder's length).
inline constexpr std::size_t kWholeTextBytes = 32 * 1024;

// A byte range [begin, end) of a text.
struct TextWindow {
  std::size_t begin = 0;
  std::size_t end = 0;
  [[nodiscard]] bool whole(std::string_view text) const noexcept { return begin == 0 && end == text.size(); }
};

// The first (Right) or last (Left) `bytes` bytes of `text` (bytes < text.size()), moved to
// the nearest cut between words within its last (first) half, else to a code point boundary.
[[nodiscard]] TextWindow text_window(std::string_view text, std::size_t bytes, Direction keep);

// Whether encode_enough reads windows (the default) or every text whole: the tests compare
// the two.
void set_text_windows(bool on) noexcept;
[[nodiscard]] bool text_windows() noexcept;

// Tokenizes growing windows of `text` — `encode(window)` returns how many tokens it gave —
// until one gives at least `keep + kWindowMarginTokens` tokens, or the window is the whole
// text; returns the last window encoded.
template <class Encode>
TextWindow encode_enough(std::string_view text, std::size_t keep, Direction side, Encode&& encode) {
  const std::size_t need = keep + kWindowMarginTokens;
  // A first guess of 8 bytes a token; most texts need one window.
  const bool windows = text_windows() && text.size() > kWholeTextBytes;
  for (std::size_t bytes = std::max<std::size_t>(need * 8, 4096); windows; bytes *= 2) {
    if (bytes >= text.size()) break;
    const TextWindow w = text_window(text, bytes, side);
    if (encode(w) >= need) return w;
  }
  const TextWindow all{0, text.size()};
  (void)encode(all);
  return all;
}

}  // namespace warden::tokenizer::detail

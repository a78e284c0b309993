#include "guard/canonical/invisible.hpp"

#include <fmt/format.h>

namespace warden::guard::canonical {
namespace {

bool is_emoji(char32_t c) noexcept {
  return (c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0x2600 && c <= 0x27BF);
}

// Zero-width and other format characters that render as nothing.
bool is_zero_width(char32_t c) noexcept {
  return c == 0x200B || c == 0x200C || c == 0x200D || c == 0x2060 || c == 0x2061 || c == 0x2062 ||
         c == 0x2063 || c == 0x2064 || c == 0xFEFF || c == 0x00AD || c == 0x180E || c == 0x034F;
}

bool is_bidi_control(char32_t c) noexcept {
  return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x200E || c == 0x200F ||
         c == 0x061C;
}

bool is_variation_selector(char32_t c) noexcept {
  return (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF);
}

}  // namespace

void reveal_invisible(Chars& text, Findings& found) {
  Chars out;
  out.reserve(text.size());
  std::size_t zero_width = 0;
  std::size_t bidi = 0;
  std::size_t selectors = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i].cp;
    if (c >= 0xE0000 && c <= 0xE007F) {
      // A run of tag characters: the visible ASCII they stand for.
      std::size_t j = i;
      while (j < text.size() && text[j].cp >= 0xE0000 && text[j].cp <= 0xE007F) {
        const char32_t ascii = text[j].cp - 0xE0000;
        if (ascii >= 0x20 && ascii < 0x7F) out.push_back({ascii, text[j].source});
        ++j;
      }
      const std::uint32_t end = j < text.size() ? text[j].source : text[j - 1].source + 4;
      found.note_span("Unicode tag characters (invisible text)", text[i].source, end);
      i = j - 1;
      continue;
    }
    if (is_zero_width(c)) {
      // A joiner inside an emoji sequence (a family, a flag) is how emoji are written.
      const bool in_emoji = c == 0x200D && i > 0 && i + 1 < text.size() &&
                            (is_emoji(text[i - 1].cp) || is_variation_selector(text[i - 1].cp)) &&
                            is_emoji(text[i + 1].cp);
      const bool leading_bom = c == 0xFEFF && i == 0;
      if (!in_emoji && !leading_bom) ++zero_width;
      continue;
    }
    if (is_bidi_control(c)) {
      ++bidi;
      continue;
    }
    if (is_variation_selector(c)) {
      // U+FE0E/FE0F choose text or emoji style: ordinary; the others carry no meaning in
      // text and are a known carrier of hidden bytes.
      if (c != 0xFE0E && c != 0xFE0F) ++selectors;
      continue;
    }
    out.push_back(text[i]);
  }
  if (zero_width > 0) found.note(fmt::format("zero-width characters ({})", zero_width));
  if (bidi > 0) found.note(fmt::format("bidirectional controls ({})", bidi));
  if (selectors > 0) found.note(fmt::format("variation selectors ({})", selectors));
  text = std::move(out);
}

}  // namespace warden::guard::canonical

#include "guard/canonical/confusables.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

namespace warden::guard::canonical {
namespace {

// Letters of other scripts drawn like a Latin letter (Unicode's confusables.txt, the
// single-letter Cyrillic, Greek and Armenian entries a font renders identically), sorted.
constexpr std::array<std::pair<char32_t, char32_t>, 62> kLookAlikes = {{
    {0x0131, U'i'}, {0x0251, U'a'}, {0x0261, U'g'}, {0x0391, U'A'}, {0x0392, U'B'}, {0x0395, U'E'},
    {0x0396, U'Z'}, {0x0397, U'H'}, {0x0399, U'I'}, {0x039A, U'K'}, {0x039C, U'M'}, {0x039D, U'N'},
    {0x039F, U'O'}, {0x03A1, U'P'}, {0x03A4, U'T'}, {0x03A5, U'Y'}, {0x03A7, U'X'}, {0x03B1, U'a'},
    {0x03B9, U'i'}, {0x03BA, U'k'}, {0x03BD, U'v'}, {0x03BF, U'o'}, {0x03C1, U'p'}, {0x03C5, U'u'},
    {0x03C7, U'x'}, {0x0405, U'S'}, {0x0406, U'I'}, {0x0408, U'J'}, {0x0410, U'A'}, {0x0412, U'B'},
    {0x0415, U'E'}, {0x041A, U'K'}, {0x041C, U'M'}, {0x041D, U'H'}, {0x041E, U'O'}, {0x0420, U'P'},
    {0x0421, U'C'}, {0x0422, U'T'}, {0x0423, U'Y'}, {0x0425, U'X'}, {0x0430, U'a'}, {0x0435, U'e'},
    {0x043A, U'k'}, {0x043E, U'o'}, {0x0440, U'p'}, {0x0441, U'c'}, {0x0443, U'y'}, {0x0445, U'x'},
    {0x0451, U'e'}, {0x0455, U's'}, {0x0456, U'i'}, {0x0458, U'j'}, {0x04BB, U'h'}, {0x04CF, U'l'},
    {0x0501, U'd'}, {0x051B, U'q'}, {0x051D, U'w'}, {0x0561, U'w'}, {0x0566, U'q'}, {0x0578, U'n'},
    {0x057D, U'u'}, {0x0585, U'o'},
}};

char32_t latin_for(char32_t c) noexcept {
  const auto it = std::lower_bound(kLookAlikes.begin(), kLookAlikes.end(), c,
                                   [](const auto& entry, char32_t key) { return entry.first < key; });
  return it != kLookAlikes.end() && it->first == c ? it->second : 0;
}

bool is_letter_or_mark(char32_t c) noexcept {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_ME;
}

}  // namespace

void fold_confusables(Chars& text, Findings& found) {
  // Whether the text is written in Latin letters: then a word made only of look-alikes is a
  // disguise, not a word of another language.
  std::size_t letters = 0;
  std::size_t latin = 0;
  for (const Char& c : text) {
    if (is_ascii_letter(c.cp)) {
      ++letters;
      ++latin;
    } else if (c.cp >= 0x80 && is_letter_or_mark(c.cp)) {
      ++letters;
    }
  }
  const bool latin_text = latin >= 2 * (letters - latin);
  std::size_t folded = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!is_letter_or_mark(text[i].cp)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    std::size_t ascii = 0;
    std::size_t alike = 0;
    std::size_t other = 0;
    for (; j < text.size() && is_letter_or_mark(text[j].cp); ++j) {
      if (is_ascii_letter(text[j].cp)) {
        ++ascii;
      } else if (latin_for(text[j].cp) != 0) {
        ++alike;
      } else {
        ++other;
      }
    }
    const bool mixed = ascii > 0 && alike > 0;
    const bool only_alike = ascii == 0 && other == 0 && alike > 0 && latin_text;
    if (mixed || only_alike) {
      for (std::size_t k = i; k < j; ++k) {
        if (const char32_t l = latin_for(text[k].cp)) text[k].cp = l;
      }
      ++folded;
    }
    i = j;
  }
  if (folded > 0) found.note(fmt::format("look-alike letters from other scripts ({} words)", folded));
}

}  // namespace warden::guard::canonical

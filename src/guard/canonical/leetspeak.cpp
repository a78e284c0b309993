#include "guard/canonical/leetspeak.hpp"

#include <fmt/format.h>

namespace warden::guard::canonical {
namespace {

char32_t letter_for(char32_t c) noexcept {
  switch (c) {
    case U'0':
      return U'o';
    case U'1':
      return U'i';
    case U'3':
      return U'e';
    case U'4':
      return U'a';
    case U'5':
      return U's';
    case U'7':
      return U't';
    case U'@':
      return U'a';
    case U'$':
      return U's';
    case U'!':
      return U'i';
    case U'|':
      return U'l';
    default:
      return 0;
  }
}

bool in_word(char32_t c) noexcept {
  return is_ascii_letter(c) || (c >= U'0' && c <= U'9') || c == U'@' || c == U'$' || c == U'!' || c == U'|';
}

bool is_digit(char32_t c) noexcept {
  return c >= U'0' && c <= U'9';
}

bool lower_is(char32_t c, char32_t l) noexcept {
  return c == l || c == l - 32;
}

// "1st", "22nd", "3rd", "11th": digits then an ordinal suffix.
bool is_ordinal(const Chars& text, std::size_t begin, std::size_t end) {
  std::size_t k = begin;
  while (k < end && is_digit(text[k].cp)) ++k;
  if (k == begin || end - k != 2) return false;
  const char32_t a = text[k].cp;
  const char32_t b = text[k + 1].cp;
  return (lower_is(a, U's') && lower_is(b, U't')) || (lower_is(a, U'n') && lower_is(b, U'd')) ||
         (lower_is(a, U'r') && lower_is(b, U'd')) || (lower_is(a, U't') && lower_is(b, U'h'));
}

// Words longer than this are identifiers, keys or encodings, not leetspeak.
constexpr std::size_t kMaxWord = 24;

bool is_lower(char32_t c) noexcept {
  return c >= U'a' && c <= U'z';
}
bool is_upper(char32_t c) noexcept {
  return c >= U'A' && c <= U'Z';
}

bool is_leet_word(const Chars& text, std::size_t begin, std::size_t end) {
  if (end - begin < 3 || end - begin > kMaxWord || is_ordinal(text, begin, end)) return false;
  std::size_t letters = 0;
  std::size_t leet_before_letter = 0;
  std::size_t digits_before_letter = 0;
  std::size_t pending = 0;  // leet characters not yet followed by a letter
  std::size_t pending_digits = 0;
  char32_t last_letter = 0;
  for (std::size_t k = begin; k < end; ++k) {
    const char32_t c = text[k].cp;
    if (is_ascii_letter(c)) {
      // An upper-case letter after a lower-case one: camelCase, a key, base64 — no disguise.
      if (is_upper(c) && is_lower(last_letter)) return false;
      last_letter = c;
      ++letters;
      leet_before_letter += pending;
      digits_before_letter += pending_digits;
      pending = 0;
      pending_digits = 0;
    } else if (letter_for(c) != 0) {
      ++pending;
      pending_digits += is_digit(c) ? 1 : 0;
    } else {
      return false;  // 2, 6, 8, 9: a number, not a letter in disguise
    }
  }
  // A digit among the letters: "@" and "$" alone are an address or a price.
  return letters >= 2 && digits_before_letter >= 1 && leet_before_letter + pending <= letters + 1;
}

}  // namespace

void fold_leetspeak(Chars& text, Findings& found) {
  std::size_t folded = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (!in_word(text[i].cp)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && in_word(text[j].cp)) ++j;
    // Trailing "!" and "|" are punctuation, and so is a leading "|".
    std::size_t end = j;
    while (end > i && (text[end - 1].cp == U'!' || text[end - 1].cp == U'|')) --end;
    std::size_t begin = i;
    while (begin < end && text[begin].cp == U'|') ++begin;
    if (begin < end && is_leet_word(text, begin, end)) {
      for (std::size_t k = begin; k < end; ++k) {
        if (const char32_t l = letter_for(text[k].cp)) text[k].cp = l;
      }
      ++folded;
    }
    i = j;
  }
  if (folded > 0) found.note(fmt::format("leetspeak ({} words)", folded));
}

}  // namespace warden::guard::canonical

#include "guard/canonical/rot13.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace warden::guard::canonical {
namespace {

// Common English words, and the ones instructions to a model are made of; sorted.
constexpr std::array<std::string_view, 96> kWords = {
    "a",        "about",  "access",   "admin",        "all",    "an",      "and",       "answer",
    "any",      "are",    "as",       "assistant",    "at",     "be",      "before",    "but",
    "by",       "can",    "command",  "confidential", "data",   "delete",  "disregard", "do",
    "else",     "every",  "file",     "for",          "forget", "from",    "give",      "have",
    "hidden",   "how",    "i",        "if",           "ignore", "in",      "instead",   "instructions",
    "is",       "it",     "just",     "key",          "me",     "message", "mode",      "my",
    "new",      "no",     "not",      "now",          "of",     "on",      "or",        "output",
    "password", "please", "previous", "print",        "prompt", "reveal",  "rules",     "say",
    "secret",   "send",   "show",     "so",           "system", "tell",    "that",      "the",
    "them",     "then",   "there",    "these",        "they",   "this",    "to",        "tool",
    "user",     "was",    "we",       "what",         "when",   "which",   "will",      "with",
    "word",     "write",  "you",      "your",         "yours",  "up",      "out",       "one",
};

bool is_common(const std::string& word) {
  static const auto sorted = [] {
    std::array<std::string_view, kWords.size()> s = kWords;
    std::sort(s.begin(), s.end());
    return s;
  }();
  return std::binary_search(sorted.begin(), sorted.end(), std::string_view(word));
}

char32_t rotate(char32_t c) noexcept {
  if (c >= U'a' && c <= U'z') return U'a' + (c - U'a' + 13) % 26;
  if (c >= U'A' && c <= U'Z') return U'A' + (c - U'A' + 13) % 26;
  return c;
}

// Common words as written and as rotated.
std::pair<std::size_t, std::size_t> count_common(const Chars& text) {
  std::size_t plain = 0;
  std::size_t rotated = 0;
  std::string a;
  std::string b;
  const auto flush = [&] {
    if (!a.empty()) {
      plain += is_common(a) ? 1 : 0;
      rotated += is_common(b) ? 1 : 0;
    }
    a.clear();
    b.clear();
  };
  for (const Char& c : text) {
    if (is_ascii_letter(c.cp)) {
      const char32_t lower = c.cp | 0x20;
      a += static_cast<char>(lower);
      b += static_cast<char>(rotate(lower));
    } else {
      flush();
    }
  }
  flush();
  return {plain, rotated};
}

}  // namespace

bool decode_rot13(Chars& text, Findings& found) {
  const auto [plain, rotated] = count_common(text);
  if (rotated < 3 || rotated < 2 * plain + 2) return false;
  for (Char& c : text) c.cp = rotate(c.cp);
  found.note("ROT13 text");
  return true;
}

}  // namespace warden::guard::canonical

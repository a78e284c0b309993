#include "guard/canonical/hex.hpp"

#include <string>

namespace warden::guard::canonical {
namespace {

bool is_word_char(char32_t c) noexcept {
  return is_ascii_letter(c) || (c >= U'0' && c <= U'9') || c == U'_';
}

// One span of hex at text[i]: its bytes and where it ends; empty when there is none.
struct Span {
  std::string bytes;
  std::size_t end = 0;
};

Span read_span(const Chars& text, std::size_t i) {
  Span s;
  const auto at = [&text](std::size_t k) { return k < text.size() ? text[k].cp : U'\0'; };
  if (at(i) == U'\\' && at(i + 1) == U'x') {  // \xHH\xHH...
    std::size_t k = i;
    while (at(k) == U'\\' && at(k + 1) == U'x' && hex_digit(at(k + 2)) >= 0 && hex_digit(at(k + 3)) >= 0) {
      s.bytes += static_cast<char>(hex_digit(at(k + 2)) * 16 + hex_digit(at(k + 3)));
      k += 4;
    }
    s.end = k;
    if (s.bytes.size() < 4) s.bytes.clear();
    return s;
  }
  if (hex_digit(at(i)) < 0 || (i > 0 && is_word_char(text[i - 1].cp))) return s;
  std::size_t k = i;
  while (hex_digit(at(k)) >= 0) ++k;
  if (k - i >= 16 && (k - i) % 2 == 0 && !is_word_char(at(k))) {  // contiguous
    for (std::size_t p = i; p < k; p += 2)
      s.bytes += static_cast<char>(hex_digit(at(p)) * 16 + hex_digit(at(p + 1)));
    s.end = k;
    return s;
  }
  if (k - i != 2) return s;
  // Pairs separated by one space: "69 67 6e".
  k = i;
  while (hex_digit(at(k)) >= 0 && hex_digit(at(k + 1)) >= 0 && !is_word_char(at(k + 2))) {
    s.bytes += static_cast<char>(hex_digit(at(k)) * 16 + hex_digit(at(k + 1)));
    k += 2;
    if (at(k) != U' ' || hex_digit(at(k + 1)) < 0) break;
    ++k;
  }
  s.end = k;
  if (s.bytes.size() < 6) s.bytes.clear();
  return s;
}

}  // namespace

bool decode_hex_spans(Chars& text, Findings& found) {
  Chars out;
  out.reserve(text.size());
  bool any = false;
  for (std::size_t i = 0; i < text.size();) {
    const Span s = read_span(text, i);
    if (!s.bytes.empty() && (looks_like_text(s.bytes) || looks_like_encoding(s.bytes))) {
      append_decoded(out, text[i].source, s.bytes);
      found.note_span("hex span", text[i].source, end_source(text, s.end));
      any = true;
      i = s.end;
      continue;
    }
    // Past a run of hex digits that is no span, so that its tail is not tried again.
    const std::size_t next = s.end > i ? s.end : i + 1;
    for (; i < next; ++i) out.push_back(text[i]);
  }
  text = std::move(out);
  return any;
}

}  // namespace warden::guard::canonical

#include "guard/canonical/percent.hpp"

#include <string>

#include "core/utf8.hpp"

namespace warden::guard::canonical {
namespace {

bool is_space(char32_t c) noexcept {
  return c == U' ' || c == U'\n' || c == U'\t' || c == U'\r';
}

}  // namespace

bool decode_percent_spans(Chars& text, Findings& found) {
  Chars out;
  out.reserve(text.size());
  bool any = false;
  for (std::size_t i = 0; i < text.size();) {
    if (is_space(text[i].cp)) {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j].cp)) ++j;
    std::string bytes;
    std::size_t escapes = 0;
    for (std::size_t k = i; k < j; ++k) {
      const char32_t c = text[k].cp;
      if (c == U'%' && k + 2 < j && hex_digit(text[k + 1].cp) >= 0 && hex_digit(text[k + 2].cp) >= 0) {
        bytes += static_cast<char>(hex_digit(text[k + 1].cp) * 16 + hex_digit(text[k + 2].cp));
        k += 2;
        ++escapes;
      } else {
        utf8::append(bytes, c == U'+' ? U' ' : c);
      }
    }
    if (escapes >= 3 && looks_like_text(bytes, 3)) {
      append_decoded(out, text[i].source, bytes);
      found.note_span("URL-encoded span", text[i].source, end_source(text, j));
      any = true;
    } else {
      for (std::size_t k = i; k < j; ++k) out.push_back(text[k]);
    }
    i = j;
  }
  text = std::move(out);
  return any;
}

}  // namespace warden::guard::canonical

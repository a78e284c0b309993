#include "guard/canonical/html_entities.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace warden::guard::canonical {
namespace {

constexpr std::array<std::pair<std::u32string_view, char32_t>, 7> kNamed = {{
    {U"lt", U'<'},
    {U"gt", U'>'},
    {U"amp", U'&'},
    {U"quot", U'"'},
    {U"apos", U'\''},
    {U"nbsp", U' '},
    {U"sol", U'/'},
}};

// The reference at text[i] ("&...;"): the character and the index past the ";", or {0, i}.
std::pair<char32_t, std::size_t> reference_at(const Chars& text, std::size_t i) {
  if (text[i].cp != U'&') return {0, i};
  std::size_t k = i + 1;
  std::u32string name;
  while (k < text.size() && k - i <= 10 && text[k].cp != U';') name += text[k++].cp;
  if (k >= text.size() || text[k].cp != U';' || name.empty()) return {0, i};
  if (name[0] == U'#') {
    const bool hex = name.size() > 1 && (name[1] == U'x' || name[1] == U'X');
    std::uint32_t v = 0;
    const std::size_t first = hex ? 2 : 1;
    if (name.size() <= first) return {0, i};
    for (std::size_t p = first; p < name.size(); ++p) {
      const char32_t c = name[p];
      int d = -1;
      if (c >= U'0' && c <= U'9') d = static_cast<int>(c - U'0');
      if (hex && c >= U'a' && c <= U'f') d = static_cast<int>(c - U'a') + 10;
      if (hex && c >= U'A' && c <= U'F') d = static_cast<int>(c - U'A') + 10;
      if (d < 0) return {0, i};
      v = v * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
      if (v > 0x10FFFF) return {0, i};
    }
    if (v == 0 || (v >= 0xD800 && v <= 0xDFFF)) return {0, i};
    return {static_cast<char32_t>(v), k + 1};
  }
  for (const auto& [n, c] : kNamed) {
    if (n == name) return {c, k + 1};
  }
  return {0, i};
}

}  // namespace

bool decode_html_entities(Chars& text, Findings& found) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size() && count < 3; ++i) {
    if (reference_at(text, i).first != 0) ++count;
  }
  if (count < 3) return false;
  Chars out;
  out.reserve(text.size());
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  bool any = false;
  for (std::size_t i = 0; i < text.size();) {
    const auto [c, next] = reference_at(text, i);
    if (c == 0) {
      out.push_back(text[i++]);
      continue;
    }
    if (!any) first = text[i].source;
    any = true;
    out.push_back({c, text[i].source});
    last = end_source(text, next);
    i = next;
  }
  found.note_span("HTML-escaped span", first, last);
  text = std::move(out);
  return true;
}

}  // namespace warden::guard::canonical

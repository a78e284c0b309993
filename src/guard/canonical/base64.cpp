#include "guard/canonical/base64.hpp"

#include <optional>
#include <string>

namespace warden::guard::canonical {
namespace {

constexpr std::size_t kMinSpan = 16;

int value_of(char32_t c) noexcept {
  if (c >= U'A' && c <= U'Z') return static_cast<int>(c - U'A');
  if (c >= U'a' && c <= U'z') return static_cast<int>(c - U'a') + 26;
  if (c >= U'0' && c <= U'9') return static_cast<int>(c - U'0') + 52;
  if (c == U'+' || c == U'-') return 62;
  if (c == U'/' || c == U'_') return 63;
  return -1;
}

bool in_alphabet(char32_t c) noexcept {
  return value_of(c) >= 0 || c == U'=';
}

// The bytes text[begin, end) encode (padding optional), or nothing when it is no base64.
std::optional<std::string> decode(const Chars& text, std::size_t begin, std::size_t end) {
  while (end > begin && text[end - 1].cp == U'=') --end;
  if (end - begin < kMinSpan || (end - begin) % 4 == 1) return std::nullopt;
  std::string out;
  std::uint32_t bits = 0;
  int held = 0;
  for (std::size_t k = begin; k < end; ++k) {
    const int v = value_of(text[k].cp);
    if (v < 0) return std::nullopt;  // "=" inside the span
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out += static_cast<char>((bits >> held) & 0xFF);
    }
  }
  return out;
}

}  // namespace

bool decode_base64_spans(Chars& text, Findings& found) {
  Chars out;
  out.reserve(text.size());
  bool any = false;
  for (std::size_t i = 0; i < text.size();) {
    if (!in_alphabet(text[i].cp) || (i > 0 && in_alphabet(text[i - 1].cp))) {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && in_alphabet(text[j].cp)) ++j;
    std::optional<std::string> bytes;
    std::size_t from = i;
    if (j - i >= kMinSpan) {
      bytes = decode(text, i, j);
      // "see base64/aWdub3Jl...": the span after the last separator the alphabet shares with prose.
      if (!bytes || !(looks_like_text(*bytes) || looks_like_encoding(*bytes))) {
        for (std::size_t k = j; k > i; --k) {
          const char32_t c = text[k - 1].cp;
          if (c == U'/' || c == U'-' || c == U'+' || c == U'_') {
            from = k;
            bytes = decode(text, k, j);
            break;
          }
        }
      }
    }
    if (bytes && (looks_like_text(*bytes) || looks_like_encoding(*bytes))) {
      for (std::size_t k = i; k < from; ++k) out.push_back(text[k]);
      append_decoded(out, text[from].source, *bytes);
      found.note_span("base64 span", text[from].source, end_source(text, j));
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

#pragma once
// The text the canonicalisation passes work on: code points, each remembering the byte in
// the original text it came from, so that what the guard finds in the canonical text (a
// window, a decoded span) is named where the user wrote it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace warden::guard::canonical {

struct Char {
  char32_t cp;
  std::uint32_t source;  // byte offset in the original text
};
using Chars = std::vector<Char>;

// The code points of valid UTF-8 `text`, each with its own byte offset.
[[nodiscard]] Chars to_chars(std::string_view text);
// Chars back to UTF-8.
[[nodiscard]] std::string to_utf8(const Chars& text);

// What the passes found hidden or disguised, in words a reader of the guard's answer
// understands ("base64 span at 12-80": code points of the original text).
class Findings {
 public:
  explicit Findings(std::string_view original) : original_(original) {}
  void note(std::string what);
  // "<kind> at S-E" for the original bytes [begin, end).
  void note_span(std::string_view kind, std::uint32_t begin, std::uint32_t end);
  [[nodiscard]] const std::vector<std::string>& evidence() const noexcept { return evidence_; }

 private:
  std::string_view original_;
  std::vector<std::string> evidence_;
  std::size_t dropped_ = 0;
};

// Whether `c` is an ASCII letter.
[[nodiscard]] constexpr bool is_ascii_letter(char32_t c) noexcept {
  return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z');
}

// The value of hexadecimal digit `c`, or -1.
[[nodiscard]] constexpr int hex_digit(char32_t c) noexcept {
  if (c >= U'0' && c <= U'9') return static_cast<int>(c - U'0');
  if (c >= U'a' && c <= U'f') return static_cast<int>(c - U'a') + 10;
  if (c >= U'A' && c <= U'F') return static_cast<int>(c - U'A') + 10;
  return -1;
}

// The original byte where a span of `text` ending before index `end` ends: where text[end]
// came from, or past the last (ASCII) character of a span that ends the text.
[[nodiscard]] inline std::uint32_t end_source(const Chars& text, std::size_t end) {
  return end < text.size() ? text[end].source : text[end - 1].source + 1;
}

// Appends `decoded` (valid UTF-8) to `out`, every code point carrying `source`: a decoded
// span is named by where its encoding began.
void append_decoded(Chars& out, std::uint32_t source, std::string_view decoded);

// Whether `bytes` reads as text a person wrote: valid UTF-8, at least `min_length` bytes,
// and (nearly) all of it letters, digits, spaces and punctuation — what a decoded span must
// be for the guard to read it instead of the encoding.
[[nodiscard]] bool looks_like_text(std::string_view bytes, std::size_t min_length = 6);
// Whether `bytes` is itself an encoding a later round decodes (hex, base64, URL escapes):
// a nested disguise, kept for that round.
[[nodiscard]] bool looks_like_encoding(std::string_view bytes);

}  // namespace warden::guard::canonical

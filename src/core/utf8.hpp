#pragma once
// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates (U+D800..U+DFFF, which is how
// "lone surrogates encoded in UTF-8" arrive), nothing above U+10FFFF. Every text that
// enters Warden passes through here before anything else looks at its bytes.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace warden::utf8 {

// Byte offset of the first invalid sequence, or nullopt when the whole text is valid.
std::optional<std::size_t> find_invalid(std::string_view text) noexcept;

// Throws Error(InvalidInput) naming the byte offset when the text is not valid UTF-8.
// `what` names the text in the message ("input 3", "vocab.txt line 7").
void require_valid(std::string_view text, std::string_view what = "text");

// Decodes valid UTF-8 to code points (throws like require_valid on invalid input).
std::u32string decode(std::string_view text);

// Appends the UTF-8 encoding of a code point (must be a scalar value).
void append(std::string& out, char32_t cp);

// Decodes the code point starting at text[pos] and advances pos. Precondition: the text
// is valid UTF-8 and pos is at a sequence boundary.
char32_t next(std::string_view text, std::size_t& pos) noexcept;

// The Unicode White_Space property (Rust's char::is_whitespace, which HF tokenizers use).
constexpr bool is_white_space(char32_t c) noexcept {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// Code points in valid UTF-8 `text` (TEI's x-compute-characters counts these): every byte
// that is not a continuation byte starts one.
constexpr std::size_t code_points(std::string_view text) noexcept {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

// True when valid UTF-8 `text` is empty or holds only White_Space: nothing to judge or embed.
bool is_blank(std::string_view text) noexcept;

}  // namespace warden::utf8

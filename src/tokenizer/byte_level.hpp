#pragma once
// GPT-2's byte <-> printable character table (bytes_to_unicode): printable Latin-1 bytes map
// to themselves, the other 68 bytes to U+0100.. in order.

#include <array>
#include <cstdint>

namespace warden::tokenizer::detail {

struct ByteLevelTable {
  std::array<char32_t, 256> to_char{};
  std::array<std::int16_t, 0x144> to_byte{};  // indexed by char, -1 when not a byte char
  constexpr ByteLevelTable() {
    for (auto& b : to_byte) b = -1;
    char32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<std::int16_t>(b);
    }
  }
};

inline constexpr ByteLevelTable kByteLevel{};

inline char32_t byte_to_char(unsigned char b) noexcept {
  return kByteLevel.to_char[b];
}
// The byte a byte-level character stands for, or -1.
inline int char_to_byte(char32_t c) noexcept {
  return c < kByteLevel.to_byte.size() ? kByteLevel.to_byte[c] : -1;
}

}  // namespace warden::tokenizer::detail

#include "core/utf8.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "core/error.hpp"

namespace warden::utf8 {

namespace {

inline bool is_continuation(unsigned char b) {
  return (b & 0xC0U) == 0x80U;
}

// Length of the valid sequence at text[pos], or 0 when it is invalid.
std::size_t valid_sequence_length(std::string_view text, std::size_t pos) noexcept {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  const std::size_t left = text.size() - pos;
  if (b0 < 0x80U) return 1;
  if (b0 < 0xC2U) return 0;  // continuation byte or overlong 2-byte lead
  if (b0 < 0xE0U) {
    return (left >= 2 && is_continuation(static_cast<unsigned char>(text[pos + 1]))) ? 2 : 0;
  }
  if (b0 < 0xF0U) {
    if (left < 3) return 0;
    const auto b1 = static_cast<unsigned char>(text[pos + 1]);
    const auto b2 = static_cast<unsigned char>(text[pos + 2]);
    if (!is_continuation(b1) || !is_continuation(b2)) return 0;
    if (b0 == 0xE0U && b1 < 0xA0U) return 0;   // overlong
    if (b0 == 0xEDU && b1 >= 0xA0U) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (b0 < 0xF5U) {
    if (left < 4) return 0;
    const auto b1 = static_cast<unsigned char>(text[pos + 1]);
    if (!is_continuation(b1) || !is_continuation(static_cast<unsigned char>(text[pos + 2])) ||
        !is_continuation(static_cast<unsigned char>(text[pos + 3]))) {
      return 0;
    }
    if (b0 == 0xF0U && b1 < 0x90U) return 0;   // overlong
    if (b0 == 0xF4U && b1 >= 0x90U) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::optional<std::size_t> find_invalid(std::string_view text) noexcept {
  std::size_t pos = 0;
  while (pos < text.size()) {
    // ASCII fast path: eight bytes at a time while none has the high bit set.
    while (pos + 8 <= text.size()) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + pos, sizeof word);
      if ((word & 0x8080808080808080ULL) != 0) break;
      pos += 8;
    }
    if (pos >= text.size()) break;
    const std::size_t len = valid_sequence_length(text, pos);
    if (len == 0) return pos;
    pos += len;
  }
  return std::nullopt;
}

void require_valid(std::string_view text, std::string_view what) {
  if (const auto bad = find_invalid(text)) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is not valid UTF-8 (invalid byte 0x{:02X} at offset {})", what,
                            static_cast<unsigned char>(text[*bad]), *bad));
  }
}

char32_t next(std::string_view text, std::size_t& pos) noexcept {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  auto cont = [&](std::size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[pos + i]) & 0x3FU);
  };
  char32_t cp = 0;
  if (b0 < 0x80U) {
    cp = b0;
    pos += 1;
  } else if (b0 < 0xE0U) {
    cp = (static_cast<char32_t>(b0 & 0x1FU) << 6) | cont(1);
    pos += 2;
  } else if (b0 < 0xF0U) {
    cp = (static_cast<char32_t>(b0 & 0x0FU) << 12) | (cont(1) << 6) | cont(2);
    pos += 3;
  } else {
    cp = (static_cast<char32_t>(b0 & 0x07U) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    pos += 4;
  }
  return cp;
}

std::u32string decode(std::string_view text) {
  require_valid(text);
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) out.push_back(next(text, pos));
  return out;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80U) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800U) {
    out.push_back(static_cast<char>(0xC0U | (cp >> 6)));
    out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
  } else if (cp < 0x10000U) {
    out.push_back(static_cast<char>(0xE0U | (cp >> 12)));
    out.push_back(static_cast<char>(0x80U | ((cp >> 6) & 0x3FU)));
    out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
  } else {
    out.push_back(static_cast<char>(0xF0U | (cp >> 18)));
    out.push_back(static_cast<char>(0x80U | ((cp >> 12) & 0x3FU)));
    out.push_back(static_cast<char>(0x80U | ((cp >> 6) & 0x3FU)));
    out.push_back(static_cast<char>(0x80U | (cp & 0x3FU)));
  }
}

bool is_blank(std::string_view text) noexcept {
  for (std::size_t pos = 0; pos < text.size();) {
    if (!is_white_space(next(text, pos))) return false;
  }
  return true;
}

}  // namespace warden::utf8

#include "tokenizer/text_window.hpp"

#include <atomic>

namespace warden::tokenizer::detail {

namespace {

std::atomic<bool> g_windows{true};

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_continuation(char c) noexcept {
  return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U;
}

}  // namespace

void set_text_windows(bool on) noexcept {
  g_windows.store(on, std::memory_order_relaxed);
}

bool text_windows() noexcept {
  return g_windows.load(std::memory_order_relaxed);
}

TextWindow text_window(std::string_view text, std::size_t bytes, Direction keep) {
  if (bytes >= text.size()) return {0, text.size()};
  if (keep == Direction::Right) {
    // Keep the start: end just before a whitespace byte in the window's second half.
    for (std::size_t k = bytes; k > bytes / 2; --k) {
      if (is_space(text[k])) return {0, k};
    }
    std::size_t end = bytes;
    while (end > 0 && is_continuation(text[end])) --end;
    return {0, end};
  }
  // Keep the end: begin at a whitespace byte in the window's first half.
  const std::size_t first = text.size() - bytes;
  for (std::size_t k = first; k < first + bytes / 2; ++k) {
    if (is_space(text[k])) return {k, text.size()};
  }
  std::size_t begin = first;
  while (begin < text.size() && is_continuation(text[begin])) ++begin;
  return {begin, text.size()};
}

}  // namespace warden::tokenizer::detail

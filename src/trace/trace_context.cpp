#include "trace/trace_context.hpp"

#include <algorithm>
#include <random>
#include <span>

namespace warden::trace {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is invalid in traceparent
}

// Lower-case hex of exactly 2 * out.size() characters into out.
bool read_hex(std::string_view text, std::span<std::uint8_t> out) noexcept {
  if (text.size() != out.size() * 2) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_value(text[2 * i]);
    const int lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::array<std::uint8_t, N> id{};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      const std::uint64_t r = rng();
      for (std::size_t j = 0; j < 8 && i + j < N; ++j) id[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
    }
  } while (std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; }));
  return id;
}

}  // namespace

std::optional<TraceContext> parse_traceparent(std::string_view h) noexcept {
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55.
  if (h.size() < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return std::nullopt;
  std::array<std::uint8_t, 1> version{};
  if (!read_hex(h.substr(0, 2), version) || version[0] == 0xFF) return std::nullopt;
  // Version 00 is exactly 55 characters; a later version may append fields after a dash.
  if (version[0] == 0 ? h.size() != 55 : (h.size() > 55 && h[55] != '-')) return std::nullopt;
  TraceContext c;
  std::array<std::uint8_t, 1> flags{};
  if (!read_hex(h.substr(3, 32), c.trace_id) || !read_hex(h.substr(36, 16), c.span_id) ||
      !read_hex(h.substr(53, 2), flags)) {
    return std::nullopt;
  }
  if (is_zero(c.trace_id) || is_zero(c.span_id)) return std::nullopt;
  c.flags = flags[0];
  return c;
}

std::string format_traceparent(const TraceContext& c) {
  const std::array<std::uint8_t, 1> flags{c.flags};
  return "00-" + to_hex(c.trace_id) + "-" + to_hex(c.span_id) + "-" + hex(flags);
}

std::string to_hex(const TraceId& id) {
  return hex(id);
}
std::string to_hex(const SpanId& id) {
  return hex(id);
}

TraceId new_trace_id() {
  return random_id<16>();
}
SpanId new_span_id() {
  return random_id<8>();
}

bool is_zero(const TraceId& id) noexcept {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}
bool is_zero(const SpanId& id) noexcept {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

}  // namespace warden::trace

#pragma once
// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` header that
// carries a trace across services, parsed strictly and written in version 00.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace warden::trace {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

struct TraceContext {
  TraceId trace_id{};
  SpanId span_id{};        // the caller's span (parsed), or ours (written)
  std::uint8_t flags = 0;  // bit 0: sampled
  [[nodiscard]] bool sampled() const noexcept { return (flags & 1U) != 0; }
};

// The context a `traceparent` header carries, or nullopt when the header is malformed (the
// specification then says to start a new trace, not to fail the request): version ff, ids
// of all zeros, upper-case hex, a version-00 header with anything after the flags.
std::optional<TraceContext> parse_traceparent(std::string_view header) noexcept;

// "00-<trace id>-<span id>-<flags>", lower-case hex.
std::string format_traceparent(const TraceContext& context);

// Lower-case hex of an id, as traceparent and OTLP/JSON write them.
std::string to_hex(const TraceId& id);
std::string to_hex(const SpanId& id);

// Fresh random ids, never all zeros.
TraceId new_trace_id();
SpanId new_span_id();

// True for an id of all zeros: "no parent" in a span, invalid in a traceparent.
bool is_zero(const TraceId& id) noexcept;
bool is_zero(const SpanId& id) noexcept;

}  // namespace warden::trace

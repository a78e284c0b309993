#pragma once
// One finished span, as the exporter sends it (OTLP's Span, the fields Warden fills).

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "trace/trace_context.hpp"

namespace warden::trace {

enum class SpanKind { Internal = 1, Server = 2 };  // OTLP's numbering

using AttributeValue = std::variant<std::string, std::int64_t>;

struct Span {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zeros: a root span
  std::string name;
  SpanKind kind = SpanKind::Internal;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t end_unix_ns = 0;
  bool error = false;  // OTLP status ERROR (a 5xx answer); otherwise UNSET
  std::vector<std::pair<std::string, AttributeValue>> attributes;
};

}  // namespace warden::trace

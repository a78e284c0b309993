#pragma once
// OTLP/HTTP's JSON encoding of an ExportTraceServiceRequest
// (opentelemetry-proto, "JSON Protobuf Encoding"): ids as lower-case hex, times as decimal
// strings of nanoseconds, enums as numbers.

#include <span>
#include <string>
#include <string_view>

#include "trace/span.hpp"

namespace warden::trace {

// One resource (service.name = `service_name`, service.version) with one scope ("warden")
// holding `spans`.
std::string otlp_json(std::span<const Span> spans, std::string_view service_name);

}  // namespace warden::trace

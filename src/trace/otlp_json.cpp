#include "trace/otlp_json.hpp"

#include <string>

#include "core/json_writer.hpp"

namespace warden::trace {

namespace {

void attribute(JsonWriter& w, std::string_view key, const AttributeValue& value) {
  w.begin_object().key("key").value(key).key("value").begin_object();
  if (const auto* s = std::get_if<std::string>(&value)) {
    w.key("stringValue").value(*s);
  } else {
    // int64 is a decimal string in protobuf's JSON mapping.
    w.key("intValue").value(std::to_string(std::get<std::int64_t>(value)));
  }
  w.end_object().end_object();
}

}  // namespace

std::string otlp_json(std::span<const Span> spans, std::string_view service_name) {
  JsonWriter w;
  w.begin_object().key("resourceSpans").begin_array().begin_object();
  w.key("resource").begin_object().key("attributes").begin_array();
  attribute(w, "service.name", std::string(service_name));
  attribute(w, "service.version", std::string(WARDEN_VERSION));
  w.end_array().end_object();
  w.key("scopeSpans").begin_array().begin_object();
  w.key("scope").begin_object().key("name").value("warden").key("version").value(WARDEN_VERSION).end_object();
  w.key("spans").begin_array();
  for (const Span& s : spans) {
    w.begin_object();
    w.key("traceId").value(to_hex(s.trace_id));
    w.key("spanId").value(to_hex(s.span_id));
    if (!is_zero(s.parent_span_id)) w.key("parentSpanId").value(to_hex(s.parent_span_id));
    w.key("name").value(s.name);
    w.key("kind").value(static_cast<int>(s.kind));
    w.key("startTimeUnixNano").value(std::to_string(s.start_unix_ns));
    w.key("endTimeUnixNano").value(std::to_string(s.end_unix_ns));
    w.key("attributes").begin_array();
    for (const auto& [key, value] : s.attributes) attribute(w, key, value);
    w.end_array();
    if (s.error) w.key("status").begin_object().key("code").value(2).end_object();
    w.end_object();
  }
  w.end_array().end_object().end_array();
  w.end_object().end_array().end_object();
  return w.take();
}

}  // namespace warden::trace

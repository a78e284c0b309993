#include "http/request_spans.hpp"

#include <chrono>
#include <string>

namespace warden::http {

std::vector<trace::Span> request_spans(const Call& call, std::string_view method, int status,
                                       Clock::time_point end) {
  // Steady-clock points become wall-clock nanoseconds through one reading of both clocks.
  const auto steady_now = Clock::now();
  const auto unix_now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  const auto unix_ns = [&](Clock::time_point t) {
    return static_cast<std::uint64_t>(
        unix_now - std::chrono::duration_cast<std::chrono::nanoseconds>(steady_now - t).count());
  };
  std::vector<trace::Span> spans;
  trace::Span server;
  server.trace_id = call.trace.trace_id;
  server.span_id = call.trace.span_id;
  server.parent_span_id = call.parent_span;
  server.kind = trace::SpanKind::Server;
  // OpenTelemetry's HTTP conventions: "{method} {route}", the route being the template.
  server.name = std::string(method) + " " + call.route;
  server.start_unix_ns = unix_ns(call.received);
  server.end_unix_ns = unix_ns(end);
  server.error = status >= 500;
  server.attributes = {{"http.request.method", std::string(method)},
                       {"http.route", call.route},
                       {"url.path", call.target},
                       {"http.response.status_code", std::int64_t{status}}};
  if (!call.request_id.empty())
    server.attributes.emplace_back("http.request.header.x-request-id", call.request_id);
  if (call.lease != nullptr) server.attributes.emplace_back("warden.model", call.lease->spec().name);
  if (call.cache_state != nullptr)
    server.attributes.emplace_back("warden.cache", std::string(call.cache_state));
  if (call.computed) {
    server.attributes.emplace_back("warden.tokens", static_cast<std::int64_t>(call.tokens));
    server.attributes.emplace_back("warden.characters", static_cast<std::int64_t>(call.characters));
  }
  spans.push_back(std::move(server));

  // The stages, from what the pipeline recorded: tokenization ends when the job is
  // submitted, the queue wait when its first batch starts; inference is the time its batches
  // took (from the first batch's start: a job split over batches waits between them too).
  // A request answered from the cache alone submitted no job and has no stages.
  if (!call.computed || call.job.submitted == Clock::time_point{}) return spans;
  const auto child = [&](std::string name, Clock::time_point from, Clock::time_point to) {
    trace::Span s;
    s.trace_id = call.trace.trace_id;
    s.span_id = trace::new_span_id();
    s.parent_span_id = call.trace.span_id;
    s.name = std::move(name);
    s.start_unix_ns = unix_ns(from);
    s.end_unix_ns = unix_ns(std::max(from, to));
    spans.push_back(std::move(s));
  };
  const Clock::time_point submitted = call.job.submitted;
  const Clock::time_point computing = submitted + call.job.queue;
  const Clock::time_point computed = computing + call.job.inference;
  child("tokenize", submitted - call.tokenization, submitted);
  spans.back().attributes.emplace_back("warden.tokens", static_cast<std::int64_t>(call.tokens));
  child("queue", submitted, computing);
  child("inference", computing, computed);
  spans.back().attributes.emplace_back("warden.batches", static_cast<std::int64_t>(call.job.batches));
  child("response", computed, end);
  return spans;
}

}  // namespace warden::http

#pragma once
// Sends finished spans to an OpenTelemetry collector over OTLP/HTTP (JSON), from a thread of
// its own: a request hands its spans over and never waits on the network. The queue is
// bounded; spans that do not fit, and spans of an export that failed (collector down, slow,
// refusing), are dropped and counted — tracing never costs a request more than a copy.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "trace/span.hpp"

namespace warden::trace {

// Where spans go: http://HOST[:PORT][/PATH]. A path ending in /v1/traces is used as given,
// any other is a base the signal's path is appended to (OTEL_EXPORTER_OTLP_ENDPOINT's rule).
struct Endpoint {
  std::string host;
  std::string port = "80";
  std::string target = "/v1/traces";
};
// Error(InvalidArgument) naming what is wrong: not http:// (https needs a collector sidecar
// or agent on the node; say so), no host, a bad port.
Endpoint parse_endpoint(std::string_view url);

struct ExporterOptions {
  std::string endpoint;  // parse_endpoint's URL
  std::string service_name = "warden";
  std::size_t max_queue = 4096;              // spans waiting for export; more are dropped
  std::size_t max_batch = 512;               // spans in one export request
  std::chrono::milliseconds interval{1000};  // the longest a span waits for its batch
  std::chrono::milliseconds timeout{2000};   // one export request, connect to answer
};

struct ExporterCounts {
  std::uint64_t exported = 0;        // spans the collector accepted (2xx)
  std::uint64_t dropped = 0;         // spans that found the queue full
  std::uint64_t failed_spans = 0;    // spans of exports that failed
  std::uint64_t failed_exports = 0;  // export requests that failed
};

class SpanExporter {
 public:
  explicit SpanExporter(ExporterOptions options);
  // Exports what is queued (stopping at the first failure, so an unreachable collector
  // delays the exit by one timeout at most), then joins the thread.
  ~SpanExporter();
  SpanExporter(const SpanExporter&) = delete;
  SpanExporter& operator=(const SpanExporter&) = delete;

  // Queues spans for export; never blocks on I/O and never throws.
  void submit(std::vector<Span> spans) noexcept;

  [[nodiscard]] ExporterCounts counts() const noexcept;
  [[nodiscard]] const Endpoint& endpoint() const noexcept { return endpoint_; }

 private:
  void run(const std::stop_token& stop);
  // One POST of `spans`; false (with the reason logged once in a while) when it failed.
  bool send(const std::vector<Span>& spans);

  ExporterOptions options_;
  Endpoint endpoint_;
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::deque<Span> queue_;
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> failed_spans_{0};
  std::atomic<std::uint64_t> failed_exports_{0};
  std::jthread thread_;  // last: started when everything above exists
};

}  // namespace warden::trace

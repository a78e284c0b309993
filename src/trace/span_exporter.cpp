#include "trace/span_exporter.hpp"

// GCC 12's middle-end "potential null pointer dereference" inside Asio's scheduler once it is
// inlined here (as in http/server.cpp): Boost's code, not ours; this file alone turns it off.
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include <utility>

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <charconv>
#include <cstdio>
#include <utility>

#include "core/error.hpp"
#include "trace/otlp_json.hpp"

namespace warden::trace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

Endpoint parse_endpoint(std::string_view url) {
  const auto bad = [url](std::string_view why) {
    return Error(ErrorKind::InvalidArgument, fmt::format("--otlp-endpoint {}: {}", url, why));
  };
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://")) {
    throw bad(
        "https is not supported: send OTLP/HTTP to a collector or agent on the node "
        "(http://localhost:4318), which can forward over TLS");
  }
  if (!url.starts_with(kScheme)) throw bad("expected http://HOST[:PORT][/PATH] (OTLP/HTTP)");
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (path.find_first_of("?# \t\r\n") != std::string_view::npos)
    throw bad("the path may not hold ?, # or spaces");
  Endpoint e;
  std::string_view host = authority;
  if (authority.starts_with('[')) {  // [IPv6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) throw bad("an IPv6 address without its ]");
    host = authority.substr(1, close - 1);
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') throw bad("expected :PORT after the address");
  } else {
    const std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    authority = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
  }
  if (host.empty()) throw bad("no host");
  if (!authority.empty()) {
    const std::string_view port = authority.substr(1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
        value > 65535) {
      throw bad("the port must be 1..65535");
    }
    e.port = std::string(port);
  }
  e.host = std::string(host);
  while (path.ends_with('/')) path.remove_suffix(1);
  e.target = path.ends_with("/v1/traces") ? std::string(path) : std::string(path) + "/v1/traces";
  return e;
}

SpanExporter::SpanExporter(ExporterOptions options)
    : options_(std::move(options)),
      endpoint_(parse_endpoint(options_.endpoint)),
      thread_([this](const std::stop_token& stop) { run(stop); }) {}

SpanExporter::~SpanExporter() {
  thread_.request_stop();
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SpanExporter::submit(std::vector<Span> spans) noexcept {
  std::size_t kept = 0;
  try {
    const std::lock_guard lock(mutex_);
    for (Span& s : spans) {
      if (queue_.size() >= options_.max_queue) break;
      queue_.push_back(std::move(s));
      ++kept;
    }
    if (queue_.size() >= options_.max_batch) wake_.notify_one();
  } catch (...) {  // out of memory: the rest is dropped like an overflow
  }
  if (kept < spans.size()) dropped_.fetch_add(spans.size() - kept, std::memory_order_relaxed);
}

ExporterCounts SpanExporter::counts() const noexcept {
  return {exported_.load(std::memory_order_relaxed), dropped_.load(std::memory_order_relaxed),
          failed_spans_.load(std::memory_order_relaxed), failed_exports_.load(std::memory_order_relaxed)};
}

void SpanExporter::run(const std::stop_token& stop) {
  std::vector<Span> batch;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, stop, options_.interval, [this] { return queue_.size() >= options_.max_batch; });
      if (queue_.empty()) {
        if (stop.stop_requested()) return;
        continue;
      }
      const std::size_t n = std::min(queue_.size(), options_.max_batch);
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    }
    const bool sent = send(batch);
    if (sent) {
      exported_.fetch_add(batch.size(), std::memory_order_relaxed);
    } else {
      failed_spans_.fetch_add(batch.size(), std::memory_order_relaxed);
      failed_exports_.fetch_add(1, std::memory_order_relaxed);
    }
    batch.clear();
    if (stop.stop_requested() && !sent) {
      // Stopping with the collector failing: what is left is dropped, not waited for.
      const std::lock_guard lock(mutex_);
      failed_spans_.fetch_add(queue_.size(), std::memory_order_relaxed);
      queue_.clear();
      return;
    }
  }
}

bool SpanExporter::send(const std::vector<Span>& spans) {
  bhttp::request<bhttp::string_body> request{bhttp::verb::post, endpoint_.target, 11};
  request.set(bhttp::field::host, endpoint_.host + ":" + endpoint_.port);
  request.set(bhttp::field::content_type, "application/json");
  request.set(bhttp::field::user_agent, "warden/" WARDEN_VERSION);
  request.body() = otlp_json(spans, options_.service_name);
  request.prepare_payload();

  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> response;
  beast::error_code result = net::error::timed_out;  // unless a step finishes first
  stream.expires_after(options_.timeout);
  resolver.async_resolve(endpoint_.host, endpoint_.port, [&](beast::error_code ec, const auto& addresses) {
    if (ec) return void(result = ec);
    stream.async_connect(addresses, [&](beast::error_code ec2, const auto&) {
      if (ec2) return void(result = ec2);
      bhttp::async_write(stream, request, [&](beast::error_code ec3, std::size_t) {
        if (ec3) return void(result = ec3);
        bhttp::async_read(stream, buffer, response,
                          [&](beast::error_code ec4, std::size_t) { result = ec4; });
      });
    });
  });
  // The resolver has no deadline of its own: run_for bounds the whole exchange.
  io.run_for(options_.timeout + std::chrono::milliseconds(100));
  beast::error_code ignored;
  stream.socket().close(ignored);
  if (!result && response.result_int() / 100 == 2) return true;
  // One line per failure would flood the log while a collector is down; the counters count
  // every one (warden_trace_export_failures_total), the log says it the first time.
  if (failed_exports_.load(std::memory_order_relaxed) == 0) {
    const std::string why =
        result ? result.message()
               : fmt::format("HTTP {} {}", response.result_int(), response.body().substr(0, 200));
    std::fprintf(
        stderr,
        "warden: warning: exporting spans to http://%s:%s%s failed (%s); later failures are only counted\n",
        endpoint_.host.c_str(), endpoint_.port.c_str(), endpoint_.target.c_str(), why.c_str());
  }
  return false;
}

}  // namespace warden::trace

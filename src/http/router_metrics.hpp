#pragma once
// Internal to the router: its HTTP-level Prometheus series (requests by route and status,
// end-to-end time). A null registry turns them off. (Tokenization time and the 429s decided
// before tokenizing are the pipeline's, whatever the transport.)

#include <chrono>
#include <string>

#include "http/call.hpp"
#include "serving/metrics.hpp"

namespace warden::http {

struct RouterMetrics {
  explicit RouterMetrics(serving::MetricsRegistry* r) : registry(r) {}

  void on_response(const Call& call, int status, Clock::duration total);
  [[nodiscard]] std::string render() const;

  serving::MetricsRegistry* registry;
};

}  // namespace warden::http

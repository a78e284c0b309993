#pragma once
// Internal to the router: its HTTP-level Prometheus series (requests by route and status,
// end-to-end and tokenization time). A null registry turns them off.

#include <chrono>
#include <string>

#include "http/router_impl.hpp"
#include "serving/metrics.hpp"

namespace warden::http {

struct RouterMetrics {
  RouterMetrics(serving::MetricsRegistry* registry, const serving::Scheduler& scheduler);

  void on_response(const Call& call, int status, Clock::duration total);
  // A 429 decided before tokenizing (the scheduler counts the ones it decides itself).
  void on_rejected();
  [[nodiscard]] std::string render() const;

  serving::MetricsRegistry* registry;
  serving::Histogram* tokenization = nullptr;
  serving::Counter* rejected = nullptr;
};

}  // namespace warden::http

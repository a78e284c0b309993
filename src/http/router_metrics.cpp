#include "http/router_metrics.hpp"

namespace warden::http {

void RouterMetrics::on_response(const Call& call, int status, Clock::duration total) {
  if (registry == nullptr) return;
  registry
      ->counter("warden_requests_total", "HTTP requests answered, by route and status",
                {{"route", call.route}, {"status", std::to_string(status)}})
      .inc();
  registry
      ->histogram("warden_request_duration_seconds", "Time from a request's arrival to its answer, by route",
                  serving::default_latency_buckets(), {{"route", call.route}})
      .observe(std::chrono::duration<double>(total).count());
}

std::string RouterMetrics::render() const {
  if (registry == nullptr) return "# metrics are not enabled in this process\n";
  return registry->render();
}

}  // namespace warden::http

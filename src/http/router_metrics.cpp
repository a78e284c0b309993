#include "http/router_metrics.hpp"

namespace warden::http {

RouterMetrics::RouterMetrics(serving::MetricsRegistry* r, const serving::Scheduler& /*scheduler*/)
    : registry(r) {
  if (registry == nullptr) return;
  tokenization =
      &registry->histogram("warden_tokenization_duration_seconds", "Time tokenizing one request's inputs",
                           serving::default_latency_buckets());
  // The same series the scheduler's observer counts into (serving/scheduler_metrics.cpp).
  rejected =
      &registry->counter("warden_rejected_total", "Requests refused with 429: the wait queue was full");
}

void RouterMetrics::on_rejected() {
  if (rejected != nullptr) rejected->inc();
}

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
  if (call.computed) tokenization->observe(std::chrono::duration<double>(call.tokenization).count());
}

std::string RouterMetrics::render() const {
  if (registry == nullptr) return "# metrics are not enabled in this process\n";
  return registry->render();
}

}  // namespace warden::http

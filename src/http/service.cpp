#include "http/service.hpp"

#include "serving/metrics.hpp"
#include "serving/scheduler_metrics.hpp"
#include "serving/worker_pool.hpp"

namespace warden::http {

Service::Service(const Embedder& embedder, ServiceOptions options, serving::MetricsRegistry* metrics) {
  serving::SchedulerObserver observer;
  if (metrics != nullptr) observer = serving::scheduler_observer(*metrics);
  scheduler_ = std::make_unique<serving::Scheduler>(options.scheduler, std::move(observer));
  if (metrics != nullptr) serving::register_scheduler_gauges(*metrics, *scheduler_);
  workers_ = std::make_unique<serving::WorkerPool>(options.workers);
  router_ = std::make_unique<Router>(embedder, *scheduler_, *workers_, metrics, std::move(options.router));
}

Service::~Service() {
  // Jobs still queued complete (Stopped) while the workers that format their answers are
  // alive; then the workers run what is left, and only then go the router and scheduler.
  scheduler_->drain(std::chrono::milliseconds(0));
  workers_.reset();
  router_.reset();
  scheduler_.reset();
}

void Service::drain(std::chrono::milliseconds grace) {
  scheduler_->drain(grace);
}

}  // namespace warden::http

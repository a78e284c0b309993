#include "http/service.hpp"

#include "serving/metrics.hpp"
#include "serving/scheduler_metrics.hpp"
#include "serving/worker_pool.hpp"

namespace warden::http {

Service::Service(const Embedder& embedder, ServiceOptions options, serving::MetricsRegistry* metrics)
    : Service(ServedModel{&embedder, nullptr}, std::move(options), metrics) {}

Service::Service(ServedModel model, ServiceOptions options, serving::MetricsRegistry* metrics) {
  start(options, metrics);
  router_ = std::make_unique<Router>(model, *scheduler_, *workers_, metrics, std::move(options.router));
}

Service::Service(serving::ModelManager& models, const guard::Guard* guard, ServiceOptions options,
                 serving::MetricsRegistry* metrics) {
  start(options, metrics);
  router_ =
      std::make_unique<Router>(models, guard, *scheduler_, *workers_, metrics, std::move(options.router));
}

void Service::start(const ServiceOptions& options, serving::MetricsRegistry* metrics) {
  serving::SchedulerObserver observer;
  if (metrics != nullptr) observer = serving::scheduler_observer(*metrics);
  scheduler_ = std::make_unique<serving::Scheduler>(options.scheduler, std::move(observer));
  if (metrics != nullptr) serving::register_scheduler_gauges(*metrics, *scheduler_);
  workers_ = std::make_unique<serving::WorkerPool>(options.workers);
}

Service::~Service() {
  if (workers_) shutdown(std::chrono::milliseconds(0));
  router_.reset();
  scheduler_.reset();
}

void Service::shutdown(std::chrono::milliseconds grace) {
  // Requests waiting for a model load go on to the scheduler first (or fail); then jobs
  // still queued complete (Stopped) while the workers that format their answers are
  // alive; then the workers run what is left. The router and scheduler go last.
  router_->settle();
  scheduler_->drain(grace);
  workers_.reset();
}

}  // namespace warden::http

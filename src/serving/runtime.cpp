#include "serving/runtime.hpp"

#include "serving/metrics.hpp"
#include "serving/model_manager.hpp"
#include "serving/pipeline.hpp"
#include "serving/scheduler_metrics.hpp"
#include "serving/worker_pool.hpp"

namespace warden::serving {

Runtime::Runtime(ModelManager& models, RuntimeOptions options, MetricsRegistry* metrics) {
  SchedulerObserver observer;
  if (metrics != nullptr) observer = scheduler_observer(*metrics);
  scheduler_ = std::make_unique<Scheduler>(options.scheduler, std::move(observer));
  if (metrics != nullptr) register_scheduler_gauges(*metrics, *scheduler_);
  workers_ = std::make_unique<WorkerPool>(options.workers);
  pipeline_ = std::make_unique<Pipeline>(models, *scheduler_, *workers_, options.cache, metrics);
  tasks_ = std::make_unique<tasks::Tasks>(*pipeline_, options.limits, options.strict_model_names,
                                          std::move(options.guard));
}

Runtime::~Runtime() {
  if (workers_) shutdown(std::chrono::milliseconds(0));
  tasks_.reset();
  pipeline_.reset();
  scheduler_.reset();
}

void Runtime::shutdown(std::chrono::milliseconds grace) {
  // Requests waiting for a model load go on to the scheduler first (or fail); then jobs
  // still queued complete (Stopped) while the workers that format their answers are alive;
  // then the workers run what is left. The tasks, pipeline and scheduler go last.
  pipeline_->leases().settle();
  scheduler_->drain(grace);
  workers_.reset();
}

}  // namespace warden::serving

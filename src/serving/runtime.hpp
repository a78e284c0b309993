#pragma once
// What a server runs, whatever its transports: the scheduler (compute thread), the workers
// (tokenization, formatting), the pipeline (the result cache, the one inference path) and
// the tasks over it (serving/tasks) — assembled in the one order that tears down safely.
// HTTP's router and gRPC's services are peers on one runtime's tasks.

#include <chrono>
#include <cstddef>
#include <memory>

#include "serving/result_cache.hpp"
#include "serving/scheduler.hpp"
#include "serving/tasks/tasks.hpp"

namespace warden::serving {

class MetricsRegistry;
class ModelManager;
class Pipeline;
class WorkerPool;

struct RuntimeOptions {
  SchedulerOptions scheduler;
  std::size_t workers = 1;  // tokenization and response-formatting threads
  // The result cache: final results of repeated inputs, per model. max_bytes 0 (the default): off.
  ResultCacheOptions cache;
  tasks::Limits limits;
  bool strict_model_names = false;  // a `model` nobody serves is unknown, not the default's
  tasks::GuardSetup guard;
};

class Runtime {
 public:
  // The models, the guard (options.guard) and metrics (may be null) must outlive the runtime.
  Runtime(ModelManager& models, RuntimeOptions options, MetricsRegistry* metrics);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  // shutdown(0) unless it ran already.
  ~Runtime();

  [[nodiscard]] tasks::Tasks& tasks() noexcept { return *tasks_; }
  [[nodiscard]] Pipeline& pipeline() noexcept { return *pipeline_; }
  [[nodiscard]] Scheduler& scheduler() noexcept { return *scheduler_; }

  // Waits for requests that wait for a model load, then lets queued work finish (at most
  // `grace`; what is left is refused as stopping), then joins the workers, so that every
  // task has ended when this returns. No task may start afterwards.
  void shutdown(std::chrono::milliseconds grace);

 private:
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<tasks::Tasks> tasks_;
};

}  // namespace warden::serving

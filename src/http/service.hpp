#pragma once
// The application behind the server, assembled in the one order that tears down safely:
// scheduler (compute thread) -> workers (tokenization, formatting) -> router (routes).
// The CLI and the tests build a Service and hand service.handler() to a Server.

#include <chrono>
#include <cstddef>
#include <memory>

#include "embed/embedder.hpp"
#include "http/router.hpp"
#include "serving/scheduler.hpp"

namespace warden::serving {
class MetricsRegistry;
class WorkerPool;
}  // namespace warden::serving

namespace warden::http {

struct ServiceOptions {
  serving::SchedulerOptions scheduler;
  std::size_t workers = 1;  // tokenization and response-formatting threads
  RouterOptions router;
};

class Service {
 public:
  // embedder (and metrics, which may be null) must outlive the service.
  Service(const Embedder& embedder, ServiceOptions options, serving::MetricsRegistry* metrics);
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  // drain(0) if not drained yet, then stops the workers before the router they call.
  ~Service();

  [[nodiscard]] Handler& handler() noexcept { return *router_; }
  [[nodiscard]] serving::Scheduler& scheduler() noexcept { return *scheduler_; }

  // Lets queued work finish (at most `grace`), then refuses new work with 503.
  void drain(std::chrono::milliseconds grace);

 private:
  std::unique_ptr<serving::Scheduler> scheduler_;
  std::unique_ptr<serving::WorkerPool> workers_;
  std::unique_ptr<Router> router_;
};

}  // namespace warden::http

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
  // The model (and metrics, which may be null) must outlive the service.
  Service(const Embedder& embedder, ServiceOptions options, serving::MetricsRegistry* metrics);
  // The same for a reranker or classifier (or either, through ServedModel).
  Service(ServedModel model, ServiceOptions options, serving::MetricsRegistry* metrics);
  // Many models (the manager and guard, which may be null, must outlive the service).
  Service(serving::ModelManager& models, const guard::Guard* guard, ServiceOptions options,
          serving::MetricsRegistry* metrics);
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  // shutdown(0) unless it ran already.
  ~Service();

  [[nodiscard]] Handler& handler() noexcept { return *router_; }
  [[nodiscard]] serving::Scheduler& scheduler() noexcept { return *scheduler_; }

  // Waits for requests that wait for a model load, then lets queued work finish (at most `grace`; what is
  // left is answered 503), then joins the workers, so that every answer has been handed to its Respond
  // callback when this returns. Call it after Server::run() returns and before the Server is destroyed: the
  // callbacks post to the server's I/O context. No request may arrive afterwards.
  void shutdown(std::chrono::milliseconds grace);

 private:
  void start(const ServiceOptions& options, serving::MetricsRegistry* metrics);
  std::unique_ptr<serving::Scheduler> scheduler_;
  std::unique_ptr<serving::WorkerPool> workers_;
  std::unique_ptr<Router> router_;
};

}  // namespace warden::http

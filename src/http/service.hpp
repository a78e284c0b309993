#pragma once
// The HTTP application over a serving::Runtime (serving/runtime.hpp: scheduler, workers,
// pipeline, tasks): models -> runtime -> router (routes). The CLI and the tests build a
// Service and hand service.handler() to a Server; gRPC is a peer on the same
// service.runtime().

#include <chrono>
#include <memory>
#include <string>

#include "classify/sequence_classifier.hpp"
#include "embed/embedder.hpp"
#include "http/router.hpp"
#include "serving/runtime.hpp"

namespace warden::http {

struct ServiceOptions {
  serving::SchedulerOptions scheduler;
  std::size_t workers = 1;  // tokenization and response-formatting threads
  RouterOptions router;
  // The result cache: final results of repeated inputs, per model. max_bytes 0 (the
  // default): off, and no x-cache header.
  serving::ResultCacheOptions cache;
  std::string tier;         // single-model services: what /info reports
  std::string tier_reason;  // ... and why that tier (e.g. why the fallback runs)
  // A guard still being fitted when the service starts (the many-model constructor's guard is
  // then null): /guard and the guarded routes wait for it. Must outlive the service.
  serving::tasks::GuardSlot* guard_pending = nullptr;
};

// The one model a single-model service answers for: exactly one of the two is set. An
// embedder answers the embedding routes, a sequence classifier /rerank, /v1/rerank and
// /predict; every other compute route answers 424 (the model is the wrong kind), as TEI does.
struct ServedModel {
  const embed::Embedder* embedder = nullptr;
  const classify::SequenceClassifier* classifier = nullptr;
  // The prompt-injection guard (POST /guard): a probe over `embedder`, or the classifier
  // method over its own model (Guard::classifier(), any served kind); null: /guard answers 424.
  const guard::Guard* guard = nullptr;
};

class Service {
 public:
  // One model the service does not own (tests, tools), as a manager of one pinned model.
  // The model (and metrics, which may be null) must outlive the service.
  // Error(InvalidArgument) unless exactly one of model's pointers is set.
  Service(const embed::Embedder& embedder, ServiceOptions options, serving::MetricsRegistry* metrics);
  Service(ServedModel model, ServiceOptions options, serving::MetricsRegistry* metrics);
  // Many models (the manager and guard, which may be null, must outlive the service).
  Service(serving::ModelManager& models, const guard::Guard* guard, ServiceOptions options,
          serving::MetricsRegistry* metrics);
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  // shutdown(0) unless it ran already.
  ~Service();

  [[nodiscard]] Handler& handler() noexcept { return *router_; }
  [[nodiscard]] serving::Runtime& runtime() noexcept { return *runtime_; }
  [[nodiscard]] serving::Scheduler& scheduler() noexcept;
  [[nodiscard]] serving::Pipeline& pipeline() noexcept;

  // Waits for requests that wait for a model load, then lets queued work finish (at most `grace`; what is
  // left is answered 503), then joins the workers, so that every answer has been handed to its Respond
  // callback when this returns. Call it after Server::run() returns and before the Server is destroyed: the
  // callbacks post to the server's I/O context. No request may arrive afterwards.
  void shutdown(std::chrono::milliseconds grace);

 private:
  void start(serving::ModelManager& models, const guard::Guard* guard, ServiceOptions options,
             serving::MetricsRegistry* metrics);
  std::unique_ptr<serving::ModelManager> owned_models_;  // single-model services
  std::unique_ptr<serving::Runtime> runtime_;
  std::unique_ptr<Router> router_;
  bool shut_down_ = false;
};

}  // namespace warden::http

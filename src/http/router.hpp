#pragma once
// The HTTP API without the sockets: routes TEI's, OpenAI's and Cohere/Jina's requests to
// the model through the scheduler. The server (server.hpp) owns the I/O; the router
// owns what each route decides, and never computes on the I/O thread that calls handle():
//
//   I/O thread:  route lookup, auth, content type, JSON parsing, request validation
//   workers:     tokenization (Embedder::prepare), then Scheduler::submit
//   compute:     batches (serving/scheduler.hpp)
//   workers:     the response body (JSON, base64), then respond()
//
// Tests drive it directly (handle() and a Respond callback) or through a real server.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <functional>

#include "embed/embedder.hpp"
#include "embed/sequence_classifier.hpp"
#include "http/handler.hpp"
#include "serving/model_manager.hpp"
#include "serving/result_cache.hpp"

namespace warden::serving {
class Scheduler;
class WorkerPool;
class MetricsRegistry;
}  // namespace warden::serving

namespace warden::guard {
class Guard;
}  // namespace warden::guard

namespace warden::http {

struct RouterOptions {
  std::string api_key;  // non-empty: every route but /health (and /metrics with public_metrics) needs it
  bool public_metrics = false;  // /metrics answers without the API key (it lists the served models)
  // A `model` no served model has answers 404 instead of going to the route's default model.
  bool strict_model_names = false;
  std::size_t max_client_batch_size = 1024;  // inputs in one request; more is 422
  // Vector values one answer may carry (/embed_all's tokens x dim, /embed's inputs x dim);
  // more is 413, refused before computing. 8 Mi floats: 32 MiB of floats, about 100 MB of
  // JSON at most.
  std::size_t max_response_floats = std::size_t{8} << 20;
  bool auto_truncate = true;  // a request's default for `truncate`
  std::string tier;           // single-model constructors: what /info reports
  std::string tier_reason;    // ... and why that tier (e.g. why the fallback runs)
  // The model /guard's probe embeds with (a pinned name in the manager); empty: the default
  // embedding model.
  std::string guard_model;
  // POST /admin/models: turns {"name", "model", "dtype"} into a spec (may download; runs on its own
  // thread). Empty: the route answers 501. Throws warden::Error for a bad source.
  std::function<serving::ModelSpec(const std::string& name, const std::string& source,
                                   const std::string& dtype)>
      make_spec;
  // The result cache: final results of repeated inputs, per model. max_bytes 0
  // (the default): off, and no x-cache header.
  serving::ResultCacheOptions cache;
};

// The one model a router serves: exactly one of the two is set. An embedder answers the
// embedding routes, a sequence classifier /rerank, /v1/rerank and /predict; every other
// compute route answers 424 (the model is the wrong kind), as TEI does.
struct ServedModel {
  const Embedder* embedder = nullptr;
  const SequenceClassifier* classifier = nullptr;
  // The prompt-injection guard (POST /guard): a probe over `embedder`, or the classifier
  // method over its own model (Guard::classifier(), any served kind); null: /guard answers 424.
  const guard::Guard* guard = nullptr;
};

class Router final : public Handler {
 public:
  // Many models (src/serving/model_manager.hpp): a request names its model in the body's
  // `model` field or with a /models/{name}/ path prefix; without either, the first model of
  // the kind the route needs answers. guard may be null. Nothing is owned; all must outlive
  // the router. metrics may be null.
  Router(serving::ModelManager& models, const guard::Guard* guard, serving::Scheduler& scheduler,
         serving::WorkerPool& workers, serving::MetricsRegistry* metrics, RouterOptions options);
  // One model the router does not own (tests, tools): a manager of one pinned model.
  // Error(InvalidArgument) unless exactly one of model's pointers is set.
  Router(ServedModel model, serving::Scheduler& scheduler, serving::WorkerPool& workers,
         serving::MetricsRegistry* metrics, RouterOptions options);
  Router(const Embedder& embedder, serving::Scheduler& scheduler, serving::WorkerPool& workers,
         serving::MetricsRegistry* metrics, RouterOptions options);
  ~Router() override;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  void handle(const Request& request, std::shared_ptr<const Cancellation> cancelled,
              Respond respond) override;
  // Waits until no request waits for a model load and no admin change is in progress
  // (their continuations use the workers and the scheduler). For shutdown.
  void settle();
  [[nodiscard]] Response error(std::string_view target, int status, std::string_view error_type,
                               std::string_view message) const override;

  // A route's error body: OpenAI's under /v1/, TEI's elsewhere.
  [[nodiscard]] static Response error_response(std::string_view target, int status,
                                               std::string_view error_type, std::string_view message,
                                               std::string_view param = {});

  // Implementation state, public only so that the route files can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden::http

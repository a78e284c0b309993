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

#include "embed/embedder.hpp"
#include "embed/sequence_classifier.hpp"
#include "http/handler.hpp"

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
  std::string api_key;                       // non-empty: every route but /health and /metrics needs it
  std::size_t max_client_batch_size = 1024;  // inputs in one request; more is 422
  bool auto_truncate = true;                 // a request's default for `truncate`
  std::string tier;                          // what /info reports: "semantic-default", ...
  std::string tier_reason;                   // why that tier (e.g. why the fallback runs)
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
  // Nothing is owned; all must outlive the router. metrics may be null.
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

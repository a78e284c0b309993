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

#include "classify/sequence_classifier.hpp"
#include "embed/embedder.hpp"
#include "http/handler.hpp"
#include "serving/model_manager.hpp"

namespace warden::serving {
class MetricsRegistry;
}  // namespace warden::serving

namespace warden::serving::tasks {
class Tasks;
}  // namespace warden::serving::tasks

namespace warden::serving {
class Readiness;
}  // namespace warden::serving

namespace warden::trace {
class SpanExporter;
}  // namespace warden::trace

namespace warden::http {

struct App;

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
  // The model /guard's probe embeds with (a pinned name in the manager); empty: the default
  // embedding model.
  std::string guard_model;
  // POST /admin/models: turns {"name", "model", "dtype"} into a spec (may download; runs on its own
  // thread). Empty: the route answers 501. Throws warden::Error for a bad source.
  std::function<serving::ModelSpec(const std::string& name, const std::string& source,
                                   const std::string& dtype)>
      make_spec;
  // What GET /health reports while the server is not ready to serve (models still loading,
  // a failed self-check); null: ready from the start. Must outlive the router.
  const serving::Readiness* readiness = nullptr;
  // Non-null: every request's spans go here (--otlp-endpoint), its traceparent is continued
  // and the answer carries ours. Must outlive the router.
  trace::SpanExporter* tracer = nullptr;
};

class Router final : public Handler {
 public:
  // Many models (src/serving/model_manager.hpp, reached through the pipeline): a request
  // names its model in the body's `model` field or with a /models/{name}/ path prefix;
  // without either, the first model of the kind the route needs answers; the guard is the
  // tasks'. Nothing is owned; all must outlive the router. metrics may be null.
  Router(serving::tasks::Tasks& tasks, serving::MetricsRegistry* metrics, RouterOptions options);
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

  std::unique_ptr<App> app_;  // what the route handlers share (app.hpp)
};

}  // namespace warden::http

// Which model a request runs on, and its lease: the /models/{name}/ prefix, the body's
// `model`, or the route's default kind; then the lease from the pipeline, at once when the
// model is resident, else when its load finishes. The route continues with the lease.

#include <fmt/format.h>

#include "core/error.hpp"
#include "http/api_error.hpp"
#include "http/router_impl.hpp"

namespace warden::http {

std::string Router::Impl::resolve_model(Call& call, const std::string& requested,
                                        std::initializer_list<ModelKind> kinds) const {
  if (!call.path_model.empty()) return call.path_model;  // a path names its model exactly
  if (!requested.empty()) {
    if (options.strict_model_names || models.status(requested)) return requested;
    call.substituted = requested;
  }
  // No name: the first model of the kind the route needs, else the first model (whose
  // wrong kind then answers 424, naming what the route needs).
  std::optional<std::string> d = models.default_for(kinds);
  if (!d) {
    const std::vector<std::string> all = models.names();
    if (all.empty()) return {};
    d = all.front();
  }
  return *d;
}

void Router::Impl::with_model(const std::shared_ptr<Call>& call, const std::string& requested,
                              std::initializer_list<ModelKind> kinds, std::function<void()> next) {
  const std::string name = resolve_model(*call, requested, kinds);
  if (name.empty()) throw ApiError(503, "Unhealthy", "no model is being served");
  pipeline.leases().acquire(
      name, [this, call, next = std::move(next)](serving::LeasePtr lease, std::exception_ptr error) {
        try {
          if (error) std::rethrow_exception(error);
          call->lease = std::move(lease);
          next();
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::NotFound && call->lease == nullptr) {
            // An unknown model: OpenAI's 404 model_not_found.
            fail(*call, 404, "NotFound", e.what(), "model");
          } else if (call->lease == nullptr) {
            fail(*call, 500, "Backend", fmt::format("the model failed to load: {}", e.what()));
          } else {
            const MappedError m = map_exception(std::current_exception(), {});
            fail(*call, m.status, m.error_type, m.message, m.param);
          }
        } catch (...) {
          const MappedError m = map_exception(std::current_exception(), {});
          fail(*call, m.status, m.error_type, m.message, m.param);
        }
      });
}

const Embedder& Router::Impl::embedder(const Call& call) {
  const serving::LoadedModel& m = call.lease->model();
  if (m.embedder == nullptr) {
    throw ApiError(424, "Backend",
                   fmt::format("model {} is a {} model: {} needs an embedding model", call.lease->spec().name,
                               classifier_kind_name(m.classifier->kind()), call.route));
  }
  return *m.embedder;
}

const Embedder& Router::Impl::dense_embedder(const Call& call) {
  const Embedder& e = embedder(call);
  if (!e.retrieval_outputs().dense) {
    const bool multi = e.retrieval_outputs().multi;
    throw ApiError(
        424, "Backend",
        fmt::format("model {} is a {} embedding model: it has no dense vectors for {}; ask {}",
                    call.lease->spec().name, multi ? "multi-vector (ColBERT)" : "sparse (SPLADE)", call.route,
                    multi ? "/embed_hybrid with \"outputs\": [\"multi\"], or /rerank"
                          : "/embed_sparse (or /embed_hybrid with \"outputs\": [\"sparse\"])"));
  }
  return e;
}

const SequenceClassifier& Router::Impl::classifier(const Call& call) {
  const serving::LoadedModel& m = call.lease->model();
  if (m.classifier == nullptr) {
    throw ApiError(424, "Backend",
                   fmt::format("model {} is an embedding model: {} needs a reranker or classifier model",
                               call.lease->spec().name, call.route));
  }
  return *m.classifier;
}

}  // namespace warden::http

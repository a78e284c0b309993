// TEI's POST / (what clients such as @huggingface/inference's endpoint(url) and LangChain's
// HuggingFaceInferenceEmbeddings call with a bare base URL) and SageMaker's POST
// /invocations: the route of the model's own kind, as TEI decides it. An embedding model
// embeds (/embed), or scores sentences against a source sentence when `inputs` is
// /similarity's object (HF's sentence-similarity task), a reranker reranks a {"query", "texts"} body
// (/rerank) and scores any other
// (/predict), a classifier predicts (/predict).

#include <fmt/format.h>

#include "http/api_error.hpp"
#include "http/classify_routes.hpp"
#include "http/embed_routes.hpp"
#include "http/root_route.hpp"

namespace warden::http {

// The body.

using namespace body;

RootRequest parse_root(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  RootRequest request;
  request.model = model_field(obj);
  request.has_query = optional_field(obj, "query").has_value();
  const std::optional<element> inputs = optional_field(obj, "inputs");
  request.similarity = inputs && inputs->is_object();
  return request;
}

void root(App& app, std::shared_ptr<Call> call, std::string_view body) {
  // The model decides which parser reads the body: a path naming no model is 404 first
  // (/models/x/nothing is a missing route, not a body to embed).
  if (!call->path_model.empty() && !app.models.status(call->path_model)) {
    throw ApiError(404, "NotFound",
                   fmt::format("no route {} and no model {}", call->target, call->path_model), "model");
  }
  const RootRequest request = parse_root(body);
  // The same model the chosen route will resolve: any kind, the first model by default.
  const std::string name = app.tasks.choose({call->path_model, request.model}, serving::tasks::kAnyKind).name;
  const std::optional<serving::ModelStatus> st = name.empty() ? std::nullopt : app.models.status(name);
  const ModelKind kind = st ? st->kind : ModelKind::Embedding;
  switch (kind) {
    case ModelKind::Embedding:
      if (request.similarity) return similarity(app, std::move(call), body);
      return embed(app, std::move(call), body, false);
    case ModelKind::Reranker:
      if (request.has_query) return rerank(app, std::move(call), body);
      return predict(app, std::move(call), body);
    case ModelKind::Classifier:
      return predict(app, std::move(call), body);
  }
}

}  // namespace warden::http

#include "http/routes.hpp"

#include <array>

#include "http/admin_routes.hpp"
#include "http/classify_routes.hpp"
#include "http/cohere_embed_route.hpp"
#include "http/docs_route.hpp"
#include "http/embed_routes.hpp"
#include "http/guard_route.hpp"
#include "http/info_routes.hpp"
#include "http/litellm_guardrail_route.hpp"
#include "http/openapi.hpp"
#include "http/retrieval_routes.hpp"
#include "http/root_route.hpp"
#include "http/token_routes.hpp"

namespace warden::http {

namespace {

using A = Access;
using D = Dialect;

// One line per route. The model-scoped ones compute with, or describe, one model.
constexpr std::array kRoutes = {
    // Operations.
    // Readiness (503 with the reason while nothing can be served) and liveness.
    Route{"/health", "GET", A::Open, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs&) { health(i, c); }},
    Route{"/live", "GET", A::Open, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs&) { i.finish(*c, json_response(200, "{}")); }},
    Route{"/metrics", "GET", A::Metrics, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs&) { i.finish(*c, metrics_text(i)); }},
    Route{"/info", "GET", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs&) { info(i, c); }},
    Route{"/openapi.json", "GET", A::Key, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs&) {
            i.finish(*c, json_response(200, std::string(openapi_json())));
          }},
    Route{"/docs", "GET", A::Open, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { docs(i, c, a.param); }},
    Route{"/docs/", "GET", A::Open, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { docs(i, c, a.param); }},
    Route{"/docs/{file}", "GET", A::Open, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { docs(i, c, a.param); }},
    // TEI.
    Route{"/", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { root(i, c, a.body); }},
    Route{"/invocations", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { root(i, c, a.body); }},
    Route{"/embed", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { embed(i, c, a.body, false); }},
    Route{"/embed_all", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { embed(i, c, a.body, true); }},
    Route{"/embed_sparse", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { embed_retrieval(i, c, a.body, true); }},
    Route{"/embed_hybrid", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { embed_retrieval(i, c, a.body, false); }},
    Route{"/similarity", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { similarity(i, c, a.body); }},
    Route{"/tokenize", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { tokenize(i, c, a.body); }},
    Route{"/decode", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { decode(i, c, a.body); }},
    Route{"/predict", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { predict(i, c, a.body); }},
    Route{"/rerank", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { rerank(i, c, a.body); }},
    Route{"/guard", "POST", A::Key, D::Tei, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { guard(i, c, a.body); }},
    // LiteLLM's Generic Guardrail API.
    Route{"/beta/litellm_basic_guardrail_api", "POST", A::Key, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { litellm_guardrail(i, c, a.body); }},
    // OpenAI.
    Route{"/v1/embeddings", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { openai_embed(i, c, a.body); }},
    Route{"/embeddings", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { openai_embed(i, c, a.body); }},
    Route{"/v1/models", "GET", A::Key, D::OpenAi, false,
          [](App& i, const CallPtr& c, const RouteArgs&) { i.finish(*c, list_models(i)); }},
    Route{"/v1/models/{id}", "GET", A::Key, D::OpenAi, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { get_model(i, c, a.param); }},
    // Cohere, Jina, vLLM and llama.cpp rerank and embed dialects.
    Route{"/v1/rerank", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { documents_rerank(i, c, a.body, 1); }},
    Route{"/v2/rerank", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { documents_rerank(i, c, a.body, 2); }},
    Route{"/v1/reranking", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { documents_rerank(i, c, a.body, 1); }},
    Route{"/v1/embed", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { cohere_embed(i, c, a.body, 1); }},
    Route{"/v2/embed", "POST", A::Key, D::OpenAi, true,
          [](App& i, const CallPtr& c, const RouteArgs& a) { cohere_embed(i, c, a.body, 2); }},
    // Warden's model management.
    Route{"/admin/models", "GET", A::Admin, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs&) { admin_list(i, c); }},
    Route{"/admin/models", "POST", A::Admin, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { admin_put(i, c, a.body); }},
    Route{"/admin/models/{name}", "DELETE", A::Admin, D::Tei, false,
          [](App& i, const CallPtr& c, const RouteArgs& a) { admin_remove(i, c, a.param); }},
};

}  // namespace

std::span<const Route> routes() noexcept {
  return kRoutes;
}

bool path_matches(const Route& route, std::string_view path, std::string_view& param) noexcept {
  const std::size_t brace = route.path.find('{');
  if (brace == std::string_view::npos) return route.path == path;
  const std::string_view prefix = route.path.substr(0, brace);
  if (path.size() <= prefix.size() || !path.starts_with(prefix)) return false;
  param = path.substr(prefix.size());
  return true;
}

Dialect dialect_of(std::string_view path) noexcept {
  for (const Route& r : kRoutes) {
    std::string_view param;
    if (path_matches(r, path, param)) return r.dialect;
  }
  return path.starts_with("/v1/") || path.starts_with("/v2/") ? Dialect::OpenAi : Dialect::Tei;
}

}  // namespace warden::http

#pragma once
// Every route's handler, by the file that holds it: the route table (routes.cpp) names them,
// one line per route. A handler parses its body (requests.hpp), hands its task to
// serving/tasks through the app (app.hpp) and formats the result; what it throws before
// answering is mapped by the router. Internal to src/http/.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/guard.hpp"
#include "http/app.hpp"

namespace warden::http {

// embed_routes.cpp: TEI's /embed (all: /embed_all) and /similarity, OpenAI's /v1/embeddings.
void embed(App& app, std::shared_ptr<Call> call, std::string_view body, bool all);
void similarity(App& app, std::shared_ptr<Call> call, std::string_view body);
void openai_embed(App& app, std::shared_ptr<Call> call, std::string_view body);
// cohere_embed_route.cpp: Cohere's /v1/embed and /v2/embed (embedding types: float, int8,
// uint8, binary, ubinary, base64).
void cohere_embed(App& app, std::shared_ptr<Call> call, std::string_view body, int version);
// retrieval_routes.cpp: TEI's /embed_sparse (sparse_only) and /embed_hybrid.
void embed_retrieval(App& app, std::shared_ptr<Call> call, std::string_view body, bool sparse_only);

// classify_routes.cpp: TEI's /predict and /rerank; the documents-style rerank dialects (Cohere
// v1/v2, Jina, vLLM, llama.cpp: /v1/rerank, /v2/rerank, /v1/reranking), `version` the Cohere
// API version the answer's meta names.
void predict(App& app, std::shared_ptr<Call> call, std::string_view body);
void rerank(App& app, std::shared_ptr<Call> call, std::string_view body);
void documents_rerank(App& app, std::shared_ptr<Call> call, std::string_view body, int version);
// A rerank's verdicts, by text index: set for the texts the answer returns when the request
// asked for `guard`.
using PassageVerdicts = std::vector<std::optional<guard::GuardResult>>;
// Answers a rerank: `answer(nullptr)` at once, or, with `guard`, after the guard has judged
// the texts the answer returns (`returned`, indices into `texts`): `answer(&verdicts)`.
void answer_rerank(App& app, const std::shared_ptr<Call>& call, bool guard, std::vector<std::size_t> returned,
                   const std::shared_ptr<const std::vector<std::string>>& texts, std::string param,
                   std::function<Response(const PassageVerdicts*)> answer);

// guard_route.cpp: Warden's /guard, and the guard every guarding route shares: judges the
// task's texts and answers with `format` (one verdict per text, in order), on a worker.
void guard(App& app, std::shared_ptr<Call> call, std::string_view body);
using GuardAnswer = std::function<Response(std::vector<guard::GuardResult> verdicts)>;
void guard_texts(App& app, std::shared_ptr<Call> call, serving::tasks::GuardTexts task, GuardAnswer format);
// litellm_guardrail_route.cpp: LiteLLM's Generic Guardrail API: BLOCKED when the guard flags
// any text, else NONE.
void litellm_guardrail(App& app, std::shared_ptr<Call> call, std::string_view body);

// token_routes.cpp: TEI's /tokenize and /decode.
void tokenize(App& app, std::shared_ptr<Call> call, std::string_view body);
void decode(App& app, std::shared_ptr<Call> call, std::string_view body);

// root_route.cpp: TEI's POST / and /invocations: the route of the model's own kind (embed,
// rerank or predict).
void root(App& app, std::shared_ptr<Call> call, std::string_view body);

// info_routes.cpp: TEI's /info, OpenAI's /v1/models and /v1/models/{id} (404
// model_not_found for one nobody serves), Prometheus' /metrics.
void info(App& app, std::shared_ptr<Call> call);
[[nodiscard]] Response list_models(const App& app);
void get_model(App& app, std::shared_ptr<Call> call, const std::string& id);
[[nodiscard]] Response metrics_text(const App& app);

// docs_route.cpp: GET /docs (the Swagger UI's page over /openapi.json) and /docs/{file} (its assets).
void docs(App& app, std::shared_ptr<Call> call, const std::string& file);

// admin_routes.cpp: GET /admin/models (list), POST /admin/models (load or replace), DELETE
// /admin/models/{name}.
void admin_list(App& app, std::shared_ptr<Call> call);
void admin_put(App& app, std::shared_ptr<Call> call, std::string_view body);
void admin_remove(App& app, std::shared_ptr<Call> call, const std::string& name);

}  // namespace warden::http

#pragma once
// Internal to the router's .cpp files: the state a request in progress carries, and the
// helpers every route uses to answer. Not a public header.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/utf8.hpp"
#include "embed/embedder.hpp"
#include "embed/retrieval_scores.hpp"
#include "guard/guard.hpp"
#include "http/router.hpp"
#include "serving/model_manager.hpp"
#include "serving/pipeline.hpp"
#include "serving/scheduler.hpp"
#include "serving/tasks/tasks.hpp"

namespace warden::http {

using Clock = std::chrono::steady_clock;

// One request being answered. Shared by the closures that carry it across threads.
struct Call {
  std::string route;   // the matched route ("/embed"), or "unmatched"
  std::string target;  // for the error format (OpenAI under /v1/)
  Respond respond;
  std::shared_ptr<const Cancellation> cancelled;
  Clock::time_point received;
  std::string path_model;  // the name in a /models/{name}/ prefix; empty without one
  // The body's `model` when no model has that name and the route's default answered
  // instead (X-Warden-Requested-Model says so); empty otherwise.
  std::string substituted;
  // The model this request runs on, held until the answer is sent: a model replaced or
  // unloaded meanwhile lives on until then.
  serving::LeasePtr lease;
  // Filled in by compute routes, for TEI's x-*-time headers and the metrics.
  bool computed = false;
  Clock::duration tokenization{};
  serving::JobTimings job;
  std::size_t tokens = 0;
  std::size_t characters = 0;
  // The result cache: Cache-Control no-cache skips lookups, no-store skips inserts. state:
  // what x-cache says ("hit", "miss", "partial"); null on routes the cache does not serve.
  bool cache_lookup = true;
  bool cache_store = true;
  const char* cache_state = nullptr;
};

// A fresh id for an answer that carries one (Cohere's `id`): 128 random bits as a UUID.
std::string response_id();

// TEI's x-compute-characters counts code points.
using utf8::code_points;

struct RouterMetrics;
using Input = serving::tasks::Input;

struct Router::Impl {
  Impl(serving::Pipeline& pipeline, const guard::Guard* guard, serving::MetricsRegistry* m, RouterOptions o);
  ~Impl();

  serving::Pipeline& pipeline;
  serving::ModelManager& models;
  serving::Scheduler& scheduler;
  const guard::Guard* guard_ptr;
  RouterOptions options;
  // What the routes ask of the models: one API with gRPC (serving/tasks/tasks.hpp).
  serving::tasks::Tasks tasks;
  std::unique_ptr<RouterMetrics> metrics;
  std::int64_t created_unix = 0;  // /v1/models' "created"
  // POST /admin/models runs the spec factory (which may download) on threads of its own;
  // joined when the router goes.
  struct AdminTask {
    std::shared_ptr<std::atomic<bool>> done;  // set when the task has answered
    std::jthread thread;
  };
  std::mutex admin_mutex;
  std::vector<AdminTask> admin_tasks;

  // A rerank's verdicts, by text index: set for the texts the answer returns when the request
  // asked for `guard`.
  using PassageVerdicts = std::vector<std::optional<guard::GuardResult>>;
  // Answers a rerank: `answer(nullptr)` at once, or, with `guard`, after the guard has judged
  // the texts the answer returns (`returned`, indices into `texts`): `answer(&verdicts)`.
  void answer_rerank(const std::shared_ptr<Call>& call, bool guard, std::vector<std::size_t> returned,
                     const std::shared_ptr<const std::vector<std::string>>& texts, std::string param,
                     std::function<Response(const PassageVerdicts*)> answer);

  // The task context of a call whose body names `requested` (its `model`).
  [[nodiscard]] static serving::tasks::Context task_context(const Call& call, std::string requested);
  // A task's end as the call's answer: the lease, the substitution and the run's record go
  // on the call (headers, metrics); a result becomes `format`'s response (on a worker), an
  // error its mapped answer.
  template <class R>
  serving::tasks::Then<R> answer(std::shared_ptr<Call> call, std::function<Response(R&)> format) {
    return then_call<R>(call, [this, call, format = std::move(format)](R& value) {
      respond_here(*call, [&] { return format(value); });
    });
  }
  // The same, but `next` answers the call itself, now or through a job of its own (a rerank's
  // guard); what it throws is mapped to the call's error.
  template <class R>
  serving::tasks::Then<R> then_call(std::shared_ptr<Call> call, std::function<void(R&)> next) {
    return [this, call, next = std::move(next)](serving::tasks::Finished<R>& f) {
      adopt(*call, f.lease, f.substituted, f.run);
      if (f.error) return fail_with(*call, f.error);
      try {
        next(*f.value);
      } catch (...) {
        fail_with(*call, std::current_exception());
      }
    };
  }
  // What a task's end tells the call (answer).
  static void adopt(Call& call, serving::LeasePtr lease, const std::string& substituted,
                    const serving::Inference* run);
  // Answers the call with `error`'s mapped status and body.
  void fail_with(Call& call, const std::exception_ptr& error) const;

  // Sends the answer: adds the load and timing headers, records metrics, responds.
  void finish(Call& call, Response response) const;
  void fail(Call& call, int status, std::string_view error_type, std::string_view message,
            std::string_view param = {}) const;

  // Builds the answer on this thread, mapping what `make` throws.
  void respond_here(Call& call, const std::function<Response()>& make) const;

  // Routes.
  void embed(std::shared_ptr<Call> call, std::string_view body, bool all);
  void openai_embed(std::shared_ptr<Call> call, std::string_view body);
  // TEI's /embed_sparse (sparse_only) and /embed_hybrid: the retrieval outputs of an embedder.
  void embed_retrieval(std::shared_ptr<Call> call, std::string_view body, bool sparse_only);
  void guard(std::shared_ptr<Call> call, std::string_view body);
  // LiteLLM's Generic Guardrail API: BLOCKED when the guard flags any text, else NONE.
  void litellm_guardrail(std::shared_ptr<Call> call, std::string_view body);
  // Judges the task's texts with the guard and answers with `answer` (one verdict per text, in
  // order), on a worker. Every guarding route goes through here.
  using GuardAnswer = std::function<Response(std::vector<guard::GuardResult> verdicts)>;
  void guard_texts(std::shared_ptr<Call> call, serving::tasks::GuardTexts task, GuardAnswer answer);
  void similarity(std::shared_ptr<Call> call, std::string_view body);
  void tokenize(std::shared_ptr<Call> call, std::string_view body);
  void decode(std::shared_ptr<Call> call, std::string_view body);
  void rerank(std::shared_ptr<Call> call, std::string_view body);
  // The documents-style rerank dialects (Cohere v1/v2, Jina, vLLM, llama.cpp): /v1/rerank,
  // /v2/rerank, /v1/reranking; `version` is the Cohere API version the answer's meta names.
  void documents_rerank(std::shared_ptr<Call> call, std::string_view body, int version);
  void predict(std::shared_ptr<Call> call, std::string_view body);
  // Cohere's /v1/embed and /v2/embed (embedding types: float, int8, uint8, binary, ubinary, base64).
  void cohere_embed(std::shared_ptr<Call> call, std::string_view body, int version);
  // TEI's POST / and /invocations: the route of the model's own kind (embed, rerank or predict).
  void root(std::shared_ptr<Call> call, std::string_view body);
  void info(std::shared_ptr<Call> call);
  [[nodiscard]] Response list_models() const;
  // GET /v1/models/{id}: one model's object, or OpenAI's 404 model_not_found.
  void get_model(std::shared_ptr<Call> call, const std::string& id);
  [[nodiscard]] Response metrics_text() const;
  // GET /docs (the Swagger UI's page over /openapi.json) and /docs/{file} (its assets).
  void docs(std::shared_ptr<Call> call, const std::string& file);
  // GET /admin/models (list), POST /admin/models (load or replace), DELETE /admin/models/{name}.
  void admin_list(std::shared_ptr<Call> call);
  void admin_put(std::shared_ptr<Call> call, std::string_view body);
  void admin_remove(std::shared_ptr<Call> call, const std::string& name);
};

// The one map from an error to its answer: an ApiError's own status, a task's refusal by its
// fault (serving/tasks/task_error.hpp), a warden::Error by its kind, a request the pipeline did not compute
// (serving::NotComputed) by its outcome, a model load that outlasted its wait 503, anything else 500.
struct MappedError {
  int status;
  std::string error_type;
  std::string message;
  std::string param;
};
MappedError map_exception(const std::exception_ptr& e, std::string_view param);

}  // namespace warden::http

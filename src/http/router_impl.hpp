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

#include "embed/embedder.hpp"
#include "http/router.hpp"
#include "serving/classify_jobs.hpp"
#include "serving/embed_jobs.hpp"
#include "serving/model_manager.hpp"
#include "serving/scheduler.hpp"
#include "serving/worker_pool.hpp"

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

// TEI's x-compute-characters counts characters: code points, not bytes (texts are valid
// UTF-8 by then, so every byte that is not a continuation byte starts one).
inline std::size_t code_points(std::string_view text) noexcept {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

// What an embedding job leaves behind for the response: moved out of the job when it completes.
struct EmbedResult {
  Embeddings pooled;
  std::vector<Embeddings> per_token;
  std::vector<std::size_t> tokens;      // per input
  std::vector<PreparedInput> prepared;  // the inputs themselves (the guard reads their ids)
};

// What a classification job leaves behind: inputs x labels raw logits.
struct ClassifyResult {
  std::vector<float> logits;
  std::size_t labels = 0;
  std::vector<std::size_t> tokens;      // per input
  std::vector<PreparedInput> prepared;  // the inputs themselves (the guard reads their ids)
};

struct RouterMetrics;
struct GuardRequest;
struct Input;

// A result cache key: `prefix` (Router::Impl::cache_prefix) and the input, a text or ids.
std::string text_key(const std::string& prefix, std::string_view text);
std::string input_key(const std::string& prefix, const Input& in);
// ... and a classifier's input: a text, or a pair (pair non-null).
std::string pair_key(const std::string& prefix, std::string_view text, const std::string* pair);

struct Router::Impl {
  Impl(serving::ModelManager& models, const guard::Guard* guard, serving::Scheduler& s,
       serving::WorkerPool& w, serving::MetricsRegistry* m, RouterOptions o);
  ~Impl();

  // The single-model constructor's manager (null otherwise); declared before `models`,
  // which refers to it.
  std::unique_ptr<serving::ModelManager> owned_models;
  serving::ModelManager& models;
  const guard::Guard* guard_ptr;
  serving::Scheduler& scheduler;
  serving::WorkerPool& workers;
  RouterOptions options;
  // The guard's own classifier (--guard-model), whatever the served models' kinds. Its jobs
  // share the scheduler but never a batch with a served model's: batches hold one runner's jobs.
  std::unique_ptr<serving::ClassifyRunner> guard_runner;
  std::unique_ptr<RouterMetrics> metrics;
  // Null when the cache is off (RouterOptions::cache.max_bytes 0).
  std::unique_ptr<serving::ResultCache> cache;
  std::int64_t created_unix = 0;  // /v1/models' "created"
  // POST /admin/models runs the spec factory (which may download) on threads of its own;
  // joined when the router goes.
  struct AdminTask {
    std::shared_ptr<std::atomic<bool>> done;  // set when the task has answered
    std::jthread thread;
  };
  std::mutex admin_mutex;
  std::vector<AdminTask> admin_tasks;
  // Acquires still waiting for a load: their continuations use the workers and the
  // scheduler, so shutdown waits for them first (wait_for_acquires).
  std::mutex acquire_mutex;
  std::condition_variable acquire_done;
  std::size_t pending_acquires = 0;
  void wait_for_acquires();

  // The model a request names: the path prefix, else `requested` when a model has that name
  // (an unknown one is the first of `kinds` unless strict_model_names, as TEI and hosted APIs'
  // clients send names such as text-embedding-3-small), else the first of `kinds`, else the
  // first model. Sets call.substituted when an unknown name was replaced. Empty: none served.
  [[nodiscard]] std::string resolve_model(Call& call, const std::string& requested,
                                          std::initializer_list<model::ModelKind> kinds) const;
  // Resolves the model (resolve_model), acquires it and runs `next` with call->lease set: at
  // once when it is resident, else when its load finishes (on the loader thread). Errors
  // (unknown model 404, load failure 500, load still running 503) answer the call; so does
  // whatever `next` throws.
  void with_model(const std::shared_ptr<Call>& call, const std::string& requested,
                  std::initializer_list<model::ModelKind> kinds, std::function<void()> next);
  // The call's embedder; ApiError 424 when its model is a reranker or classifier.
  [[nodiscard]] static const Embedder& embedder(const Call& call);
  // The call's classifier; ApiError 424 when its model is an embedder.
  [[nodiscard]] static const SequenceClassifier& classifier(const Call& call);

  // Sends the answer: adds the load and timing headers, records metrics, responds.
  void finish(Call& call, Response response) const;
  void fail(Call& call, int status, std::string_view error_type, std::string_view message,
            std::string_view param = {}) const;

  // The compute pipeline shared by the embedding routes: `prepare` runs on a worker (may
  // throw ApiError or warden::Error), the job on the compute thread, `format` on a worker.
  using Prepare = std::function<std::vector<PreparedInput>()>;
  using Format = std::function<Response(EmbedResult&)>;
  void run_job(std::shared_ptr<Call> call, serving::BatchRunner& runner, Prepare prepare, Format format);
  // The same pipeline for the classification routes: the job's logits go to `format`.
  using ClassifyFormat = std::function<Response(ClassifyResult&)>;
  void run_classify_job(std::shared_ptr<Call> call, Prepare prepare, ClassifyFormat format);
  // ... on `runner`, whose model has `labels` labels (the guard's classifier).
  void run_classify_job(std::shared_ptr<Call> call, serving::ClassifyRunner& runner, std::size_t labels,
                        Prepare prepare, ClassifyFormat format);
  // The cached pipelines (result_cache routes): `prepare_input(i)` prepares input i of n (on
  // a worker; may throw like Prepare), `key_of(i)` is its cache key. Inputs found in the
  // cache are not prepared (unless prepare_all: the guard reads every prepared input) and
  // not computed; the rest run as one job; the results are merged in order, the new ones
  // stored, and `format` sees exactly what the uncached pipeline gives it. Without a cache
  // (or key_of empty) these are run_job / run_classify_job.
  using PrepareInput = std::function<PreparedInput(std::size_t)>;
  using KeyOf = std::function<std::string(std::size_t)>;
  void run_embed(std::shared_ptr<Call> call, serving::BatchRunner& runner, std::size_t n,
                 PrepareInput prepare_input, KeyOf key_of, bool prepare_all, Format format);
  void run_classify(std::shared_ptr<Call> call, serving::ClassifyRunner& runner, std::size_t labels,
                    std::size_t n, PrepareInput prepare_input, KeyOf key_of, bool prepare_all,
                    ClassifyFormat format);
  // True when the cache serves this call (it is on); the key of a model's results of one
  // kind ("pooled", "tokens", "logits") under the options that change tokenization: the
  // model's load instance (a reload or swap invalidates), served name and dtype.
  [[nodiscard]] bool caching() const noexcept { return cache != nullptr; }
  [[nodiscard]] static std::string cache_prefix(const Call& call, std::string_view kind,
                                                const InputOptions& o);
  // Builds the answer on this thread (a worker), mapping what `make` throws.
  void respond_here(Call& call, const std::function<Response()>& make) const;

  // Answers a job that ended without results (429, 504, 499, 503, or its failure); false
  // for Outcome::Done, which the caller answers.
  bool fail_outcome(Call& call, const serving::Job& job, serving::Outcome outcome) const;
  // The stages both pipelines share. refuse_if_saturated: answers 429 before tokenizing
  // when the wait queue is already full (true when it did). prepare_timed: runs `prepare`,
  // records its time and tokens, and answers its error itself (nullopt then).
  // respond_on_worker: builds the answer on a worker, mapping what `make` throws.
  bool refuse_if_saturated(Call& call) const;
  std::optional<std::vector<PreparedInput>> prepare_timed(Call& call, const Prepare& prepare) const;
  void respond_on_worker(std::shared_ptr<Call> call, std::function<Response()> make);

  // Options shared by the routes that tokenize: truncation and the prompt by name.
  [[nodiscard]] InputOptions input_options(const Embedder& e, std::optional<bool> truncate, bool left,
                                           const std::optional<std::string>& prompt_name) const;
  // Prepares one input (text or ids), naming its index in errors.
  // The request's truncation for the classification routes (no prompts there).
  [[nodiscard]] InputOptions classify_options(std::optional<bool> truncate, bool left) const;
  [[nodiscard]] static PreparedInput prepare_one(const Embedder& e, const std::string& text,
                                                 const std::vector<std::uint32_t>* ids,
                                                 const InputOptions& options, std::size_t index,
                                                 std::string_view param);
  void check_batch_size(std::size_t n, std::string_view param) const;
  // 413 when an answer of `floats` vector values would pass max_response_floats.
  void check_response_floats(std::size_t floats, std::string_view param) const;

  // Routes.
  void embed(std::shared_ptr<Call> call, std::string_view body, bool all);
  void openai_embed(std::shared_ptr<Call> call, std::string_view body);
  void guard(std::shared_ptr<Call> call, std::string_view body);
  // /guard's classifier method (Guard::classifier() set): the guard's model, its own runner.
  void guard_classify(std::shared_ptr<Call> call, std::shared_ptr<const GuardRequest> request);
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

// Maps an exception from the embedder or a parser to a status and error type.
struct MappedError {
  int status;
  std::string error_type;
  std::string message;
  std::string param;
};
MappedError map_exception(const std::exception_ptr& e, std::string_view param);

}  // namespace warden::http

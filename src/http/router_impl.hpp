#pragma once
// Internal to the router's .cpp files: the state a request in progress carries, and the
// helpers every route uses to answer. Not a public header.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "embed/embedder.hpp"
#include "http/router.hpp"
#include "serving/classify_jobs.hpp"
#include "serving/embed_jobs.hpp"
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
  // Filled in by compute routes, for TEI's x-*-time headers and the metrics.
  bool computed = false;
  Clock::duration tokenization{};
  serving::JobTimings job;
  std::size_t tokens = 0;
  std::size_t characters = 0;
};

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

struct Router::Impl {
  Impl(ServedModel served, serving::Scheduler& s, serving::WorkerPool& w, serving::MetricsRegistry* m,
       RouterOptions o);
  ~Impl();

  ServedModel model;
  serving::Scheduler& scheduler;
  serving::WorkerPool& workers;
  RouterOptions options;
  // Only the runners of the model's kind exist.
  std::unique_ptr<serving::EmbedRunner> embed_runner;
  std::unique_ptr<serving::TokenEmbedRunner> token_runner;
  std::unique_ptr<serving::ClassifyRunner> classify_runner;
  // The guard's own classifier (--guard-model), whatever the served model's kind. Its jobs
  // share the scheduler but never a batch with the served model's: batches hold one runner's jobs.
  std::unique_ptr<serving::ClassifyRunner> guard_runner;
  std::unique_ptr<RouterMetrics> metrics;
  std::int64_t created_unix = 0;  // /v1/models' "created"

  // The served embedder; ApiError 424 when the model is a reranker or classifier.
  [[nodiscard]] const Embedder& embedder(std::string_view route) const;
  // The served classifier; ApiError 424 when the model is an embedder.
  [[nodiscard]] const SequenceClassifier& classifier(std::string_view route) const;
  [[nodiscard]] std::string_view model_id() const noexcept;
  // "embedding", "reranker" or "classifier", for /info and /v1/models.
  [[nodiscard]] std::string_view kind_name() const noexcept;
  // Whether the model judges meaning (false for the lexical hashing embedder).
  [[nodiscard]] bool semantic() const noexcept;

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
  [[nodiscard]] InputOptions input_options(std::optional<bool> truncate, bool left,
                                           const std::optional<std::string>& prompt_name) const;
  // Prepares one input (text or ids), naming its index in errors.
  // The request's truncation for the classification routes (no prompts there).
  [[nodiscard]] InputOptions classify_options(std::optional<bool> truncate, bool left) const;
  [[nodiscard]] PreparedInput prepare_one(const std::string& text, const std::vector<std::uint32_t>* ids,
                                          const InputOptions& options, std::size_t index,
                                          std::string_view param) const;
  void check_batch_size(std::size_t n, std::string_view param) const;

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
  void v1_rerank(std::shared_ptr<Call> call, std::string_view body);
  void predict(std::shared_ptr<Call> call, std::string_view body);
  [[nodiscard]] Response info() const;
  [[nodiscard]] Response models() const;
  [[nodiscard]] Response metrics_text() const;
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

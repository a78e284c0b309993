#pragma once
// The tasks a served model does, transport-neutral: the one API HTTP's routes and gRPC's
// services call (as TEI's core/infer.rs is for its routers). A task owns everything between a
// parsed request and its typed result — which model runs it and its lease, the checks that
// need the model, input preparation, result cache keys, the pipeline run and the finishing
// of its rows — and hands back the result or an error: a TaskError (task_error.hpp), a
// warden::Error, or the pipeline's NotComputed / ModelLoadTimeout. The transport parses,
// formats and maps errors; nothing else.
//
// A task checks what needs no model at once and throws (a malformed request is the client's
// first problem: its error comes before an unknown model's); everything after that arrives
// through `then`, exactly once: on a worker with a result, else on whichever thread learnt
// the error. `then` must not throw: the transport answers (or maps its own errors) inside it.

#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cancellation.hpp"
#include "core/model_kind.hpp"
#include "serving/model_manager.hpp"
#include "serving/pipeline.hpp"
#include "serving/tasks/classify_tasks.hpp"
#include "serving/tasks/embed_tasks.hpp"
#include "serving/tasks/guard_slot.hpp"
#include "serving/tasks/guard_tasks.hpp"
#include "serving/tasks/inputs.hpp"
#include "serving/tasks/model_choice.hpp"
#include "serving/tasks/token_tasks.hpp"

namespace warden::serving::tasks {

// Every kind of model, in the order a task of any kind prefers them.
inline constexpr std::initializer_list<ModelKind> kAnyKind = {ModelKind::Embedding, ModelKind::Reranker,
                                                              ModelKind::Classifier};

// What a transport knows of the call a task runs for.
struct Context {
  ModelChoice model;
  std::string asker;  // what the client called, for errors: a route ("/embed") or a method ("Embed")
  std::shared_ptr<const Cancellation> cancelled;
  bool cache_lookup = true;  // false: compute afresh (Cache-Control: no-cache)
  bool cache_store = true;   // false: keep nothing computed (no-store)
};

// A task's end. `lease` (null when no model was acquired) keeps the model alive while the
// transport answers, and says which model answered.
template <class R>
struct Finished {
  LeasePtr lease;
  std::string substituted;  // ChosenModel::substituted
  // The pipeline's record (timings, tokens, cache use) once it ran; valid only while `then`
  // runs: copy what outlives it.
  const Inference* run = nullptr;
  std::optional<R> value;  // the result, unless `error`
  std::exception_ptr error;
};
template <class R>
using Then = std::function<void(Finished<R>&)>;

// What the guard task judges with: the guard (null: none is configured), and the name of
// the model its probe was fitted on (pinned in the manager; empty: the default embedder).
// With `pending` (and no guard) the guard is still being fitted: guard tasks wait for it.
struct GuardSetup {
  const guard::Guard* guard = nullptr;
  std::string model;
  GuardSlot* pending = nullptr;
};

class Tasks {
 public:
  // Nothing is owned; the pipeline and the guard must outlive the tasks. strict_names: a
  // requested model nobody serves is UnknownModel rather than replaced by the default.
  Tasks(Pipeline& pipeline, Limits limits, bool strict_names = false, GuardSetup guard = {});
  ~Tasks();
  Tasks(const Tasks&) = delete;
  Tasks& operator=(const Tasks&) = delete;

  [[nodiscard]] const Limits& limits() const noexcept { return limits_; }
  [[nodiscard]] Pipeline& pipeline() noexcept { return pipeline_; }
  [[nodiscard]] ChosenModel choose(const ModelChoice& choice, std::initializer_list<ModelKind> kinds) const;

  // The one lease wrapper: chooses the model (NoModel, thrown, when none is served),
  // acquires it and runs `next` with its lease — at once when it is resident, else when its
  // load finishes (on the loader thread). A load that fails (UnknownModel, LoadFailed,
  // ModelLoadTimeout) or what `next` throws goes to `failed`, with the lease when there is one.
  using Leased = std::function<void(LeasePtr lease, const ChosenModel& chosen)>;
  using LeaseFailed =
      std::function<void(std::exception_ptr error, LeasePtr lease, const ChosenModel& chosen)>;
  void with_lease(const ModelChoice& choice, std::initializer_list<ModelKind> kinds, Leased next,
                  LeaseFailed failed);

  // The model itself (TEI's /info describes it): the one a request of any kind would get,
  // leased — at once when resident, else once loaded.
  void lease(Context context, Then<LeasePtr> then);

  void embed(Context context, Embed task, Then<Embeddings> then);
  void embed_tokens(Context context, EmbedTokens task, Then<std::vector<Embeddings>> then);
  // A score per sentence.
  void similarity(Context context, Similarity task, Then<std::vector<float>> then);
  void embed_retrieval(Context context, EmbedRetrieval task, Then<Retrieved> then);
  void classify(Context context, Classify task, Then<Classified> then);
  // A score per text, in text order.
  void rerank(Context context, Rerank task, Then<std::vector<float>> then);
  void tokenize(Context context, Tokenize task, Then<std::vector<std::vector<embed::TokenInfo>>> then);
  void decode(Context context, Decode task, Then<std::vector<std::string>> then);
  // One verdict per text. The probe decides on the vectors of the model it was fitted on,
  // whatever the request names; the classifier method runs the guard's own model.
  void guard(Context context, GuardTexts task, Then<std::vector<guard::GuardResult>> then);
  // Whether guard tasks can be answered: a guard is configured, or one is being fitted.
  [[nodiscard]] bool has_guard() const;
  // ModelCannot (424) unless has_guard(): what a route checks before any compute.
  void expect_guard() const;

  // The lease's model as an embedder (`dense`: one with dense vectors) or a classifier;
  // ModelCannot naming `asker` otherwise.
  [[nodiscard]] static const embed::Embedder& embedder_of(const ModelLease& lease, std::string_view asker,
                                                          bool dense = false);
  [[nodiscard]] static const classify::SequenceClassifier& classifier_of(const ModelLease& lease,
                                                                         std::string_view asker);

  // A pipeline run a task plans once its model is leased, and how its rows become R (on a worker).
  template <class R>
  struct Job {
    InferenceRequest request;
    std::function<R(Inference&)> finish;
  };
  template <class R>
  using Plan = std::function<Job<R>(const ModelLease& lease)>;
  // Leases the model, plans the job on it, runs it and finishes its result into `then`.
  template <class R>
  void run(const Context& context, std::initializer_list<ModelKind> kinds, Plan<R> plan, Then<R> then);
  // Runs a planned job (with the lease it holds, if any) and finishes its result into `then`.
  template <class R>
  void launch(const Context& context, LeasePtr lease, std::string substituted, Job<R> job, Then<R> then);
  // Leases the model and runs `work` on a worker (no model compute: no batches, no record).
  template <class R>
  void run_on_worker(const Context& context, std::initializer_list<ModelKind> kinds,
                     std::function<R(const ModelLease&)> work, Then<R> then);

 private:
  // A task's end without a result: `error`, with the lease when there is one.
  template <class R>
  static void fail_into(const Then<R>& then, std::exception_ptr error, LeasePtr lease,
                        const ChosenModel& chosen) {
    Finished<R> f;
    f.lease = std::move(lease);
    f.substituted = chosen.substituted;
    f.error = std::move(error);
    then(f);
  }

  Pipeline& pipeline_;
  Limits limits_;
  bool strict_names_;
  GuardSetup guard_;
  // The guard's own classifier (its classifier method), whatever the served models' kinds.
  // Its jobs share the scheduler but never a batch with a served model's: batches hold one
  // runner's jobs.
  std::unique_ptr<ClassifyRunner> guard_runner_;
};

template <class R>
void Tasks::run(const Context& context, std::initializer_list<ModelKind> kinds, Plan<R> plan, Then<R> then) {
  // One allocation holds what both continuations need (a request's hot path: each copy of a
  // std::function or a context is a heap allocation).
  struct Pending {
    Context context;
    Plan<R> plan;
    Then<R> then;
  };
  auto pending = std::make_shared<Pending>(Pending{context, std::move(plan), std::move(then)});
  auto failed = [pending](std::exception_ptr error, LeasePtr lease, const ChosenModel& chosen) {
    fail_into(pending->then, std::move(error), std::move(lease), chosen);
  };
  auto next = [this, pending](LeasePtr lease, const ChosenModel& chosen) {
    Job<R> job = pending->plan(*lease);
    launch<R>(pending->context, std::move(lease), chosen.substituted, std::move(job), pending->then);
  };
  with_lease(pending->context.model, kinds, std::move(next), std::move(failed));
}

template <class R>
void Tasks::launch(const Context& context, LeasePtr lease, std::string substituted, Job<R> job,
                   Then<R> then) {
  job.request.cancelled = context.cancelled;
  job.request.cache_lookup = context.cache_lookup;
  job.request.cache_store = context.cache_store;
  pipeline_.run(std::move(job.request),
                [lease = std::move(lease), substituted = std::move(substituted),
                 finish = std::move(job.finish), then = std::move(then)](Inference& run) {
                  Finished<R> f;
                  f.lease = lease;
                  f.substituted = substituted;
                  f.run = &run;
                  if (run.outcome != Outcome::Done) {
                    f.error = run.error;
                  } else {
                    try {
                      f.value.emplace(finish(run));
                    } catch (...) {
                      f.error = std::current_exception();
                    }
                  }
                  then(f);
                });
}

template <class R>
void Tasks::run_on_worker(const Context& context, std::initializer_list<ModelKind> kinds,
                          std::function<R(const ModelLease&)> work, Then<R> then) {
  auto failed = [then](std::exception_ptr error, LeasePtr lease, const ChosenModel& chosen) {
    fail_into(then, std::move(error), std::move(lease), chosen);
  };
  auto next = [this, work = std::move(work), then](LeasePtr lease, const ChosenModel& chosen) {
    pipeline_.post([lease, substituted = chosen.substituted, work, then] {
      Finished<R> f;
      f.lease = lease;
      f.substituted = substituted;
      try {
        f.value.emplace(work(*lease));
      } catch (...) {
        f.error = std::current_exception();
      }
      then(f);
    });
  };
  with_lease(context.model, kinds, std::move(next), std::move(failed));
}

}  // namespace warden::serving::tasks

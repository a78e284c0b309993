#pragma once
// The one inference path every transport calls (HTTP's routes, gRPC's services, the
// server's warm-up): given a model's runner and already-validated inputs, it looks the
// inputs up in the result cache, prepares (tokenizes) the ones it must compute on a worker,
// refuses early when the wait queue is full, hands them to the scheduler as one job, merges
// the computed rows with the cached ones in input order, stores the new ones and hands back
// the rows or the reason there are none. It knows nothing of the transport: no statuses, no
// bodies. The caller turns an Inference into its answer.
//
//   run ──► worker: cache lookup ─► saturated? ─► prepare (timed) ─► all found? ──► done
//                                                       │
//                                                       ▼
//           scheduler (admission, batches) ─► compute thread: runner ─► worker: merge, store ─► done

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/cancellation.hpp"
#include "embed/embedder.hpp"
#include "serving/inference_job.hpp"
#include "serving/leases.hpp"
#include "serving/model_manager.hpp"
#include "serving/result_cache.hpp"
#include "serving/scheduler.hpp"

namespace warden::serving {

class WorkerPool;
class MetricsRegistry;
class Histogram;
class Counter;

// One request's work, already validated by its transport.
struct InferenceRequest {
  BatchRunner* runner = nullptr;
  Output output = Output::Pooled;
  std::size_t width = 0;  // the model's dim (Pooled, PerToken) or label count (Logits)
  std::size_t inputs = 0;
  // Prepares input i (on a worker). What it throws comes back as Outcome::Failed.
  std::function<embed::PreparedInput(std::size_t)> prepare;
  // Input i's result cache key (cache_key()); empty: this request does not use the cache.
  std::function<std::string(std::size_t)> key;
  // Prepare every input, also those the cache holds, and hand them back (the guard reads them).
  bool keep_prepared = false;
  bool cache_lookup = true;  // false: compute afresh (Cache-Control: no-cache)
  bool cache_store = true;   // false: do not keep what was computed (no-store)
  std::shared_ptr<const Cancellation> cancelled;

  // The model's runner for `output` and its width. The model must be of the output's kind
  // (an embedder for Pooled and PerToken, a classifier for Logits).
  static InferenceRequest on(const LoadedModel& model, Output output);
};

// Why a request got no results, other than a failure of its own (Inference::error holds
// one for every outcome but Done and Failed): refused, timed out, cancelled or stopped.
// Each transport maps it, with every other error, in its one mapping function.
class NotComputed : public std::runtime_error {
 public:
  NotComputed(Outcome outcome, const std::string& message) : std::runtime_error(message), outcome_(outcome) {}
  [[nodiscard]] Outcome outcome() const noexcept { return outcome_; }

 private:
  Outcome outcome_;
};

// Whether the cache answered: Off when the request did not use it.
enum class CacheUse { Off, Hit, Miss, Partial };
[[nodiscard]] const char* cache_use_name(CacheUse use) noexcept;  // null for Off

// What run() hands back, once.
struct Inference {
  Outcome outcome = Outcome::Done;
  // Every outcome but Done: why. Failed: what prepare or the runner threw; otherwise a
  // NotComputed.
  std::exception_ptr error;
  // Done: every input's rows, in input order, as the model gave them (cache hits included).
  InferenceRows result;
  std::vector<std::size_t> tokens;             // Done: per input
  std::vector<embed::PreparedInput> prepared;  // Done with keep_prepared: every input
  // For timing headers and metadata. computed: the request got its results (from the model
  // or the cache); a refused one carries no timings.
  bool computed = false;
  Clock::duration tokenization{};
  JobTimings job;
  std::size_t total_tokens = 0;
  CacheUse cache = CacheUse::Off;
};

class Pipeline {
 public:
  // Nothing is owned but the cache (options.max_bytes 0: none); all must outlive the
  // pipeline. metrics may be null.
  Pipeline(ModelManager& models, Scheduler& scheduler, WorkerPool& workers, ResultCacheOptions cache,
           MetricsRegistry* metrics);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  using Done = std::function<void(Inference&)>;
  // Runs the request; `done` is called exactly once: on a worker when there are results (so
  // that formatting them happens there), else on whichever thread learnt the outcome.
  void run(InferenceRequest request, Done done);

  // Where a request gets its model's lease (counted, so that shutdown can settle first).
  [[nodiscard]] Leases& leases() noexcept { return leases_; }

  // Runs a task on a worker (tokenize and decode need no model compute).
  void post(std::function<void()> task);
  [[nodiscard]] std::size_t workers() const noexcept;  // how many

  [[nodiscard]] bool caching() const noexcept { return cache_ != nullptr; }
  // The prefix of a model's result keys of one kind ("pooled", "tokens", "logits") under
  // the options that change tokenization: the model's load instance (a reload or swap
  // invalidates), served name and dtype. Requests of every transport share entries.
  [[nodiscard]] static std::string cache_prefix(const ModelLease& lease, std::string_view kind,
                                                const embed::InputOptions& options);

  [[nodiscard]] ModelManager& models() noexcept { return leases_.models(); }
  [[nodiscard]] Scheduler& scheduler() noexcept { return scheduler_; }
  [[nodiscard]] const Scheduler& scheduler() const noexcept { return scheduler_; }

 private:
  struct Run;
  void compute(std::shared_ptr<Run> run);
  void finish(Run& run, InferenceRows computed, std::vector<embed::PreparedInput> computed_inputs);
  [[nodiscard]] std::exception_ptr not_computed(Outcome outcome) const;

  Leases leases_;
  Scheduler& scheduler_;
  WorkerPool& workers_;
  std::unique_ptr<ResultCache> cache_;
  Histogram* tokenization_ = nullptr;
  Counter* rejected_ = nullptr;
};

// Result cache keys of one input under a prefix (Pipeline::cache_prefix): a text, token ids,
// or a classifier's text with its optional pair.
[[nodiscard]] std::string text_key(const std::string& prefix, std::string_view text);
[[nodiscard]] std::string ids_key(const std::string& prefix, std::span<const std::uint32_t> ids);
[[nodiscard]] std::string pair_key(const std::string& prefix, std::string_view text, const std::string* pair);

}  // namespace warden::serving

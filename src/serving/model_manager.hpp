#pragma once
// The set of models one server answers for, and which of them are in memory.
//
// Every model has a name (what requests call it) and a spec that knows how to load it. A
// model is loaded on first use (or ahead of time by preload()), on the manager's one loader
// thread, so loads never block the I/O threads or the tokenization workers, and two loads
// never race for memory. Concurrent first requests for one model trigger one load: the
// others wait for it (at most ModelManagerOptions::load_wait; the load itself goes on).
//
// Residency is bounded by max_loaded models and memory_budget bytes. When a load would pass
// either bound, the least recently used resident model with no work in flight (no lease
// alive) and not pinned is unloaded first; when every resident model is busy the new one
// loads anyway and the bound is enforced again as leases end — never on the model whose
// lease just ended (it is the most recently used, and unloading it would make its next
// request reload it).
//
// Hot swap: put() loads a new spec for a name (on the loader thread) and only then swaps it
// in; requests already holding a lease on the old instance finish on it, and the old
// instance is freed with its last lease. remove() forgets a name the same way.
//
// Metrics (labels: model=<name>): warden_model_loads_total, warden_model_load_failures_total,
// warden_model_load_seconds (histogram), warden_model_evictions_total,
// warden_model_resident_bytes, warden_model_loaded (0/1), warden_model_requests_total{result=
// "hit"|"miss"} (an acquire that found the model resident, or had to wait for a load).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "core/model_kind.hpp"
#include "embed/embedder.hpp"
#include "serving/inference_job.hpp"

namespace warden::serving {

class MetricsRegistry;

// A model in memory: exactly one of embedder / classifier, with the batch runners of its kind.
struct LoadedModel {
  // Shared, not unique: a server may serve a model it does not own (the tests' single-model
  // Service); make_loaded_model(unique_ptr) takes ownership.
  std::shared_ptr<const embed::Embedder> embedder;
  std::shared_ptr<const classify::SequenceClassifier> classifier;
  std::unique_ptr<EmbedRunner> embed_runner;          // with embedder
  std::unique_ptr<TokenEmbedRunner> token_runner;     // with embedder
  std::unique_ptr<RetrievalRunner> retrieval_runner;  // with embedder
  std::unique_ptr<ClassifyRunner> classify_runner;    // with classifier
  std::size_t resident_bytes = 0;                     // an estimate of the memory the model holds
  // Which load this is, unique in the process (set by the ModelManager; 0 outside one): part
  // of the result cache's key, so a reloaded or replaced model never meets older results.
  std::uint64_t instance = 0;
};
// Wraps a loaded embedder or classifier with its runners. A unique_ptr converts (ownership
// moves in); a shared_ptr that owns nothing serves a model the caller keeps alive.
std::shared_ptr<LoadedModel> make_loaded_model(std::shared_ptr<const embed::Embedder> embedder,
                                               std::size_t resident_bytes);
std::shared_ptr<LoadedModel> make_loaded_model(std::shared_ptr<const classify::SequenceClassifier> classifier,
                                               std::size_t resident_bytes);

// How to get one model, and what is known about it before it is loaded.
struct ModelSpec {
  std::string name;                       // what requests call it: the alias, else the source
  std::string source;                     // as the user gave it: a built-in name, a folder, an HF id
  ModelKind kind = ModelKind::Embedding;  // known without loading (config.json)
  bool semantic = true;                   // false for the lexical hashing embedder
  bool pinned = false;                    // never unloaded (the guard's model)
  std::string tier;                 // what /info reports: "semantic-default", "builtin", "model-dir", "hub"
  std::string tier_reason;          // why that tier
  std::string fallback_reason;      // non-empty: the hashing embedder stands in for a model that failed
  std::size_t estimated_bytes = 0;  // before the first load, to make room; 0: unknown
  std::string dtype;                // the precision it loads in ("float32", "int8", ...); empty: no weights
  std::string architecture;         // the HF class it runs ("BertModel", ...), or the built-in's name
  // Loads the model; runs on the loader thread; throws (warden::Error) on failure.
  std::function<std::shared_ptr<LoadedModel>()> load;
};

struct ModelManagerOptions {
  std::size_t max_loaded = 0;              // resident models at most; 0: no bound
  std::size_t memory_budget = 0;           // resident bytes at most; 0: no bound
  std::chrono::milliseconds load_wait{0};  // longest a request waits for a load; 0: no limit
};

// A model in use. While a lease lives the instance stays in memory and counts as busy (it is
// never the one evicted); a replaced or removed model is freed with its last lease.
class ModelLease {
 public:
  virtual ~ModelLease() = default;
  [[nodiscard]] virtual const LoadedModel& model() const noexcept = 0;
  [[nodiscard]] virtual const ModelSpec& spec() const noexcept = 0;  // the spec it was loaded from
};
using LeasePtr = std::shared_ptr<const ModelLease>;

enum class ModelState { Unloaded, Loading, Loaded, Failed };
std::string_view model_state_name(ModelState state) noexcept;  // "unloaded", ...

// What GET /admin/models and /v1/models show.
struct ModelStatus {
  std::string name;
  std::string source;
  ModelKind kind = ModelKind::Embedding;
  bool semantic = true;
  bool pinned = false;
  std::string fallback_reason;
  std::string dtype;         // as ModelSpec::dtype
  std::string architecture;  // as ModelSpec::architecture
  ModelState state = ModelState::Unloaded;
  std::size_t resident_bytes = 0;   // 0 unless loaded
  std::size_t in_flight = 0;        // live leases on the current instance
  std::size_t dim = 0;              // an embedder's, once loaded
  std::vector<std::string> labels;  // a classifier's, once loaded
  std::uint64_t loads = 0;
  std::uint64_t hits = 0;
  std::string last_error;              // the last failed load's message (state Failed)
  std::int64_t last_used_unix_ms = 0;  // 0: never
};

class ModelManager {
 public:
  // metrics may be null; it must outlive the manager.
  explicit ModelManager(ModelManagerOptions options, MetricsRegistry* metrics = nullptr);
  // Stops the loader thread (a load in progress finishes first); waiters still pending get
  // Error(Io, "shutting down"). Leases may outlive the manager.
  ~ModelManager();
  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  // Registers a model without loading it. Error(InvalidArgument) when the name is taken or
  // empty, or spec.load is empty.
  void add(ModelSpec spec);

  // Hot swap: loads `spec` on the loader thread, then makes it the model called spec.name
  // (adding the name when new, else replacing the old instance, which lives on for its
  // leases). done(nullptr) on success; done(error) when the load failed, and then nothing
  // changed. done runs on the loader thread.
  void put(ModelSpec spec, std::function<void(std::exception_ptr)> done);

  // Forgets a model (requests holding a lease finish on it). False when the name is unknown.
  bool remove(std::string_view name);

  // Calls done exactly once, with a lease or with an error:
  //   Error(NotFound) whose message lists the available names, for an unknown name;
  //   the load's own exception when the load failed (the next acquire tries again);
  //   ModelLoadTimeout when the load did not finish within load_wait (it goes on).
  // When the model is resident, done runs on the calling thread before acquire returns;
  // otherwise on the loader thread or the timeout thread. done must not throw.
  using Acquired = std::function<void(LeasePtr, std::exception_ptr)>;
  void acquire(std::string_view name, Acquired done);
  // Blocking form (start-up, tests): the lease, or throws what acquire would pass. It waits
  // for the load however long it takes: load_wait bounds what a request waits, not start-up.
  LeasePtr acquire_sync(std::string_view name);

  // acquire_sync for a part of the server that keeps a model for as long as it runs (the
  // guard's embedder): the model stays in memory, and its status' in_flight counts requests
  // only, so an idle server shows 0.
  LeasePtr hold(std::string_view name);

  // Loads every named model now (blocking, with no time limit), in order; throws the first failure.
  void preload(const std::vector<std::string>& names);

  // The first registered model whose kind is one of `kinds`, in registration order.
  [[nodiscard]] std::optional<std::string> default_for(std::initializer_list<ModelKind> kinds) const;
  [[nodiscard]] std::optional<ModelStatus> status(std::string_view name) const;
  [[nodiscard]] std::vector<ModelStatus> list() const;   // registration order
  [[nodiscard]] std::vector<std::string> names() const;  // registration order
  [[nodiscard]] std::size_t resident_bytes() const;

 private:
  // acquire with a wait of its own: 0, no limit.
  void acquire(std::string_view name, Acquired done, std::chrono::milliseconds wait);

  struct State;
  std::shared_ptr<State> state_;
};

// Thrown (through acquire) when a load takes longer than load_wait.
class ModelLoadTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace warden::serving

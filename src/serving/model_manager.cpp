#include "serving/model_manager.hpp"

#include <atomic>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include "core/error.hpp"
#include "serving/metrics.hpp"

namespace warden::serving {

std::shared_ptr<LoadedModel> make_loaded_model(std::shared_ptr<const embed::Embedder> embedder,
                                               std::size_t resident_bytes) {
  if (!embedder) throw Error(ErrorKind::InvalidArgument, "make_loaded_model: no embedder");
  auto loaded = std::make_shared<LoadedModel>();
  loaded->embedder = std::move(embedder);
  loaded->embed_runner = std::make_unique<EmbedRunner>(*loaded->embedder);
  loaded->token_runner = std::make_unique<TokenEmbedRunner>(*loaded->embedder);
  loaded->retrieval_runner = std::make_unique<RetrievalRunner>(*loaded->embedder);
  loaded->resident_bytes = resident_bytes;
  return loaded;
}

std::shared_ptr<LoadedModel> make_loaded_model(std::shared_ptr<const classify::SequenceClassifier> classifier,
                                               std::size_t resident_bytes) {
  if (!classifier) throw Error(ErrorKind::InvalidArgument, "make_loaded_model: no classifier");
  auto loaded = std::make_shared<LoadedModel>();
  loaded->classifier = std::move(classifier);
  loaded->classify_runner = std::make_unique<ClassifyRunner>(*loaded->classifier);
  loaded->resident_bytes = resident_bytes;
  return loaded;
}

std::string_view model_state_name(ModelState state) noexcept {
  switch (state) {
    case ModelState::Unloaded:
      return "unloaded";
    case ModelState::Loading:
      return "loading";
    case ModelState::Loaded:
      return "loaded";
    case ModelState::Failed:
      return "failed";
  }
  return "unknown";
}

namespace {

// One loaded copy of a model. A hot swap makes a new one; the old one lives on as long as
// leases hold it, so in_flight belongs to the instance, not to the name.
struct Instance {
  std::shared_ptr<LoadedModel> model;
  std::shared_ptr<const ModelSpec> spec;
  std::size_t in_flight = 0;  // under State::mutex
  std::size_t held = 0;       // of those, holds (ModelManager::hold): not requests, not shown
};

// The series of one model; null pointers when the manager has no registry.
struct EntryMetrics {
  Counter* loads = nullptr;
  Counter* failures = nullptr;
  Counter* evictions = nullptr;
  Counter* hits = nullptr;
  Counter* misses = nullptr;
  Histogram* load_seconds = nullptr;
  Gauge* resident = nullptr;
  Gauge* loaded = nullptr;
};

struct Waiter {
  ModelManager::Acquired done;
  std::optional<Clock::time_point> deadline;
};

struct Entry {
  std::shared_ptr<const ModelSpec> spec;
  std::shared_ptr<Instance> current;  // null when not resident
  bool loading = false;               // a load job is queued or running
  bool failed = false;                // the last load failed (and none succeeded since)
  std::vector<Waiter> waiters;
  std::uint64_t loads = 0;
  std::uint64_t hits = 0;
  std::string last_error;
  std::uint64_t last_use = 0;  // a sequence number, not a clock: LRU order without ties
  std::int64_t last_used_unix_ms = 0;
  std::size_t last_resident_bytes = 0;  // of the last load, to make room before a reload
  EntryMetrics metrics;
};

// A job for the loader thread: a lazy load of an entry, or a put of a new spec.
struct LoadJob {
  std::shared_ptr<Entry> entry;                      // lazy load
  std::shared_ptr<const ModelSpec> put_spec;         // put
  std::function<void(std::exception_ptr)> put_done;  // put
};

// What to call after the mutex is released: callbacks never run under it, and models are
// never destroyed under it (unloading a model can take a while).
struct Deferred {
  std::vector<std::pair<ModelManager::Acquired, LeasePtr>> leases;
  std::vector<std::pair<ModelManager::Acquired, std::exception_ptr>> errors;
  std::vector<std::shared_ptr<Instance>> unloaded;

  // Errors are moved into the callbacks, never copied: the manager's threads then hold no
  // reference to an exception a caller may be reading (libstdc++'s exception_ptr count is
  // not instrumented, so ThreadSanitizer would take the last release for a race).
  void run() {
    unloaded.clear();
    for (auto& [done, lease] : leases) done(std::move(lease), nullptr);
    for (auto& [done, error] : errors) done(nullptr, std::move(error));
  }
};

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Runs a spec's load on the loader thread, outside every lock: the model, or what it threw,
// and how long it took.
struct TimedLoad {
  std::shared_ptr<LoadedModel> model;
  std::exception_ptr error;
  double seconds = 0;
};
TimedLoad timed_load(const ModelSpec& spec) {
  TimedLoad t;
  const auto started = Clock::now();
  try {
    t.model = spec.load();
    if (!t.model) throw Error(ErrorKind::Internal, "loading model '" + spec.name + "' returned nothing");
    // Process-unique: results cached for one load are never served for another (a reload
    // after a swap or an eviction gets a new number).
    static std::atomic<std::uint64_t> next_instance{1};
    t.model->instance = next_instance.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
    t.error = std::current_exception();
  }
  t.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return t;
}

}  // namespace

struct ModelManager::State : std::enable_shared_from_this<ModelManager::State> {
  State(ModelManagerOptions opts, MetricsRegistry* registry) : options(opts), metrics(registry) {}

  const ModelManagerOptions options;
  MetricsRegistry* metrics;  // null after shutdown: leases may outlive the registry

  mutable std::mutex mutex;
  std::vector<std::shared_ptr<Entry>> entries;  // registration order
  std::deque<LoadJob> jobs;
  std::condition_variable jobs_changed;
  std::condition_variable waiters_changed;  // wakes the timeout thread
  bool stopping = false;
  std::uint64_t use_counter = 0;
  Gauge* total_resident = nullptr;

  std::thread loader;
  std::thread timer;

  class Lease final : public ModelLease {
   public:
    Lease(std::shared_ptr<Instance> instance, std::shared_ptr<State> state)
        : instance_(std::move(instance)), state_(std::move(state)) {}
    ~Lease() override { state_->release(instance_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    [[nodiscard]] const LoadedModel& model() const noexcept override { return *instance_->model; }
    [[nodiscard]] const ModelSpec& spec() const noexcept override { return *instance_->spec; }
    [[nodiscard]] const std::shared_ptr<Instance>& instance() const noexcept { return instance_; }

   private:
    std::shared_ptr<Instance> instance_;
    std::shared_ptr<State> state_;
  };

  // A lease that keeps a model for a component of the server rather than for a request.
  class Hold final : public ModelLease {
   public:
    Hold(std::shared_ptr<const Lease> lease, std::shared_ptr<State> state)
        : lease_(std::move(lease)), state_(std::move(state)) {
      const std::lock_guard lock(state_->mutex);
      ++lease_->instance()->held;
    }
    ~Hold() override {
      const std::lock_guard lock(state_->mutex);
      --lease_->instance()->held;
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    [[nodiscard]] const LoadedModel& model() const noexcept override { return lease_->model(); }
    [[nodiscard]] const ModelSpec& spec() const noexcept override { return lease_->spec(); }

   private:
    std::shared_ptr<const Lease> lease_;
    std::shared_ptr<State> state_;
  };

  // Under mutex.
  std::shared_ptr<Entry> find(std::string_view name) const {
    for (const auto& e : entries) {
      if (e->spec->name == name) return e;
    }
    return nullptr;
  }
  bool registered(const Entry* entry) const {
    return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.get() == entry; });
  }
  std::string not_served(std::string_view name) const {
    std::string message = "model '" + std::string(name) + "' is not served; available: ";
    if (entries.empty()) message += "(none)";
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) message += ", ";
      message += entries[i]->spec->name;
    }
    return message;
  }
  std::size_t resident_total() const {
    std::size_t bytes = 0;
    for (const auto& e : entries) {
      if (e->current) bytes += e->current->model->resident_bytes;
    }
    return bytes;
  }
  void touch(Entry& e) {
    e.last_use = ++use_counter;
    e.last_used_unix_ms = now_unix_ms();
  }
  EntryMetrics make_metrics(const std::string& name) const {
    EntryMetrics m;
    if (metrics == nullptr) return m;
    const Labels labels{{"model", name}};
    m.loads = &metrics->counter("warden_model_loads_total", "Models loaded, by model", labels);
    m.failures = &metrics->counter("warden_model_load_failures_total", "Model loads that failed", labels);
    m.load_seconds = &metrics->histogram("warden_model_load_seconds", "Time spent loading a model",
                                         exponential_buckets(0.01, 2.5, 10), labels);
    m.evictions = &metrics->counter("warden_model_evictions_total",
                                    "Models unloaded to respect the residency bounds", labels);
    m.resident =
        &metrics->gauge("warden_model_resident_bytes", "Estimated memory a resident model holds", labels);
    m.loaded = &metrics->gauge("warden_model_loaded", "1 when the model is resident", labels);
    const char* requests_help = "Model acquisitions: hit (resident) or miss (waited for a load)";
    m.hits =
        &metrics->counter("warden_model_requests_total", requests_help, {{"model", name}, {"result", "hit"}});
    m.misses = &metrics->counter("warden_model_requests_total", requests_help,
                                 {{"model", name}, {"result", "miss"}});
    return m;
  }
  // Under mutex. The gauges follow the current instance of an entry.
  void publish(const Entry& e) const {
    if (metrics == nullptr) return;
    if (e.metrics.resident != nullptr)
      e.metrics.resident->set(e.current ? static_cast<double>(e.current->model->resident_bytes) : 0.0);
    if (e.metrics.loaded != nullptr) e.metrics.loaded->set(e.current ? 1.0 : 0.0);
    if (total_resident != nullptr) total_resident->set(static_cast<double>(resident_total()));
  }

  // Under mutex: a lease on the entry's current instance.
  LeasePtr lease(Entry& e) {
    ++e.current->in_flight;
    return std::make_shared<const Lease>(e.current, shared_from_this());
  }

  // Under mutex: unloads least recently used idle, unpinned models (never `keep`) until
  // `incoming` more models of `incoming_bytes` fit both bounds, or nothing else can go.
  void evict(std::size_t incoming, std::size_t incoming_bytes, const Entry* keep, Deferred& out) {
    for (;;) {
      std::size_t count = incoming;
      for (const auto& e : entries) count += e->current ? 1 : 0;
      const std::size_t bytes = resident_total() + incoming_bytes;
      const bool over = (options.max_loaded > 0 && count > options.max_loaded) ||
                        (options.memory_budget > 0 && bytes > options.memory_budget);
      if (!over) return;
      Entry* victim = nullptr;
      for (const auto& e : entries) {
        if (!e->current || e.get() == keep || e->spec->pinned || e->current->in_flight > 0) continue;
        if (victim == nullptr || e->last_use < victim->last_use) victim = e.get();
      }
      if (victim == nullptr) return;  // all busy or pinned: enforced again as leases end
      out.unloaded.push_back(std::move(victim->current));
      if (metrics != nullptr && victim->metrics.evictions != nullptr) victim->metrics.evictions->inc();
      publish(*victim);
    }
  }

  void release(const std::shared_ptr<Instance>& instance) {
    Deferred deferred;
    {
      const std::lock_guard lock(mutex);
      --instance->in_flight;
      if (stopping) return;
      // The model that just answered is the most recently used: it stays, whatever the
      // bounds say (a lone model over the budget, or one beside busy and pinned ones, would
      // otherwise be unloaded after every request and reloaded by the next).
      const Entry* just_used = nullptr;
      for (const auto& e : entries) {
        if (e->current == instance) {
          e->last_use = ++use_counter;
          just_used = e.get();
        }
      }
      evict(0, 0, just_used, deferred);
    }
    deferred.run();
  }

  // Under mutex: hands every waiter of `e` a lease (or `error`).
  void settle_waiters(Entry& e, const std::exception_ptr& error, Deferred& out) {
    for (Waiter& w : e.waiters) {
      if (error) {
        out.errors.emplace_back(std::move(w.done), error);
      } else {
        out.leases.emplace_back(std::move(w.done), lease(e));
      }
    }
    e.waiters.clear();
  }

  void enqueue(LoadJob job) {
    jobs.push_back(std::move(job));
    jobs_changed.notify_one();
  }

  // Loader thread: a lazy load of an entry, deduplicated by Entry::loading.
  void run_load(const std::shared_ptr<Entry>& e) {
    Deferred before;
    std::shared_ptr<const ModelSpec> spec;
    {
      const std::lock_guard lock(mutex);
      if (!registered(e.get())) return;  // removed meanwhile; its waiters were told
      if (e->current) {                  // a put() made it resident meanwhile
        e->loading = false;
        settle_waiters(*e, nullptr, before);
      } else {
        spec = e->spec;
        const std::size_t bytes = e->last_resident_bytes > 0 ? e->last_resident_bytes : spec->estimated_bytes;
        evict(1, bytes, e.get(), before);
      }
    }
    before.run();
    if (!spec) return;

    auto [model, error, seconds] = timed_load(*spec);

    Deferred after;
    {
      const std::lock_guard lock(mutex);
      e->loading = false;
      if (!registered(e.get())) {
        // Removed while loading: the model goes with `model` below, outside the lock.
      } else if (error) {
        e->failed = true;
        e->last_error = describe(error);
        if (metrics != nullptr) e->metrics.failures->inc();
        settle_waiters(*e, error, after);
        error = nullptr;  // the waiters hold it now
      } else {
        auto instance = std::make_shared<Instance>();
        instance->model = std::move(model);
        instance->spec = spec;
        install(*e, std::move(instance), seconds, after);
      }
    }
    model.reset();
    after.run();
  }

  // Under mutex: makes `instance` the entry's current one, serves its waiters, and
  // enforces the bounds without evicting it.
  void install(Entry& e, std::shared_ptr<Instance> instance, double seconds, Deferred& out) {
    if (e.current) out.unloaded.push_back(std::move(e.current));  // lives on for its leases
    e.current = std::move(instance);
    e.spec = e.current->spec;
    e.failed = false;
    e.last_error.clear();
    ++e.loads;
    e.last_resident_bytes = e.current->model->resident_bytes;
    touch(e);
    if (metrics != nullptr) {
      e.metrics.loads->inc();
      e.metrics.load_seconds->observe(seconds);
    }
    publish(e);
    settle_waiters(e, nullptr, out);
    evict(0, 0, &e, out);
  }

  // Loader thread: hot swap.
  void run_put(const std::shared_ptr<const ModelSpec>& spec,
               const std::function<void(std::exception_ptr)>& done) {
    Deferred before;
    {
      const std::lock_guard lock(mutex);
      const auto existing = find(spec->name);
      // Room is made only for a model that adds to residency; a swap holds both briefly.
      if (!existing || !existing->current) {
        std::size_t bytes = spec->estimated_bytes;
        if (bytes == 0 && existing) bytes = existing->last_resident_bytes;
        evict(1, bytes, existing.get(), before);
      }
    }
    before.run();

    auto [model, error, seconds] = timed_load(*spec);

    Deferred after;
    if (error) {
      const std::lock_guard lock(mutex);
      if (metrics != nullptr) {
        const auto existing = find(spec->name);
        if (existing) existing->metrics.failures->inc();
      }
    } else {
      const std::lock_guard lock(mutex);
      auto entry = find(spec->name);
      if (!entry) {
        entry = std::make_shared<Entry>();
        entry->spec = spec;
        entry->metrics = make_metrics(spec->name);
        entries.push_back(entry);
      }
      auto instance = std::make_shared<Instance>();
      instance->model = std::move(model);
      instance->spec = spec;
      install(*entry, std::move(instance), seconds, after);
    }
    after.run();
    done(std::move(error));
  }

  static std::string describe(const std::exception_ptr& error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown error";
    }
  }

  void loader_main() {
    std::unique_lock lock(mutex);
    for (;;) {
      jobs_changed.wait(lock, [this] { return stopping || !jobs.empty(); });
      if (stopping) return;  // queued jobs are answered by the destructor
      LoadJob job = std::move(jobs.front());
      jobs.pop_front();
      lock.unlock();
      if (job.entry) {
        run_load(job.entry);
      } else {
        run_put(job.put_spec, job.put_done);
      }
      job = {};  // a put's spec and callback go outside the lock too
      lock.lock();
    }
  }

  // The timeout thread: fails waiters whose load_wait has passed (the load goes on).
  void timer_main() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      std::optional<Clock::time_point> earliest;
      for (const auto& e : entries) {
        for (const Waiter& w : e->waiters) {
          if (w.deadline && (!earliest || *w.deadline < *earliest)) earliest = w.deadline;
        }
      }
      if (!earliest) {
        waiters_changed.wait(lock);
        continue;
      }
      if (waiters_changed.wait_until(lock, *earliest) == std::cv_status::no_timeout) continue;
      const auto now = Clock::now();
      Deferred expired;
      for (const auto& e : entries) {
        auto it = std::stable_partition(e->waiters.begin(), e->waiters.end(),
                                        [&](const Waiter& w) { return !w.deadline || *w.deadline > now; });
        for (auto w = it; w != e->waiters.end(); ++w) {
          expired.errors.emplace_back(
              std::move(w->done),
              std::make_exception_ptr(ModelLoadTimeout("model " + e->spec->name + " is still loading after " +
                                                       std::to_string(options.load_wait.count()) + " ms")));
        }
        e->waiters.erase(it, e->waiters.end());
      }
      lock.unlock();
      expired.run();
      lock.lock();
    }
  }
};

ModelManager::ModelManager(ModelManagerOptions options, MetricsRegistry* metrics)
    : state_(std::make_shared<State>(options, metrics)) {
  if (metrics != nullptr) {
    state_->total_resident =
        &metrics->gauge("warden_models_resident_bytes", "Estimated memory all resident models hold");
  }
  // The threads use the state through a raw pointer: the destructor joins them before
  // state_ can go.
  State* s = state_.get();
  state_->loader = std::thread([s] { s->loader_main(); });
  if (options.load_wait.count() > 0) state_->timer = std::thread([s] { s->timer_main(); });
}

ModelManager::~ModelManager() {
  std::deque<LoadJob> pending;
  {
    const std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    pending.swap(state_->jobs);
  }
  state_->jobs_changed.notify_all();
  state_->waiters_changed.notify_all();
  if (state_->loader.joinable()) state_->loader.join();  // a load in progress finishes
  if (state_->timer.joinable()) state_->timer.join();

  const auto shutdown = std::make_exception_ptr(Error(ErrorKind::Io, "the model manager is shutting down"));
  Deferred deferred;
  std::vector<std::shared_ptr<Entry>> entries;
  {
    const std::lock_guard lock(state_->mutex);
    for (const auto& e : state_->entries) {
      state_->settle_waiters(*e, shutdown, deferred);
      if (e->current) deferred.unloaded.push_back(std::move(e->current));
      state_->publish(*e);
    }
    entries.swap(state_->entries);
    // Leases that outlive the manager must not touch the registry, which may be gone.
    state_->metrics = nullptr;
  }
  deferred.run();
  for (LoadJob& job : pending) {
    if (job.put_done) job.put_done(shutdown);
  }
}

void ModelManager::add(ModelSpec spec) {
  if (spec.name.empty()) throw Error(ErrorKind::InvalidArgument, "a model needs a name");
  if (!spec.load) throw Error(ErrorKind::InvalidArgument, "model '" + spec.name + "' has no loader");
  const std::lock_guard lock(state_->mutex);
  if (state_->find(spec.name)) {
    throw Error(ErrorKind::InvalidArgument, "model name '" + spec.name + "' is already taken");
  }
  auto entry = std::make_shared<Entry>();
  entry->metrics = state_->make_metrics(spec.name);
  entry->spec = std::make_shared<const ModelSpec>(std::move(spec));
  state_->publish(*entry);
  state_->entries.push_back(std::move(entry));
}

void ModelManager::put(ModelSpec spec, std::function<void(std::exception_ptr)> done) {
  // An invalid spec is answered at once, on the calling thread: nothing to load.
  if (spec.name.empty() || !spec.load) {
    done(std::make_exception_ptr(
        Error(ErrorKind::InvalidArgument, spec.name.empty() ? std::string("a model needs a name")
                                                            : "model '" + spec.name + "' has no loader")));
    return;
  }
  {
    const std::lock_guard lock(state_->mutex);
    if (!state_->stopping) {
      state_->enqueue({nullptr, std::make_shared<const ModelSpec>(std::move(spec)), std::move(done)});
      return;
    }
  }
  done(std::make_exception_ptr(Error(ErrorKind::Io, "the model manager is shutting down")));
}

bool ModelManager::remove(std::string_view name) {
  Deferred deferred;
  {
    const std::lock_guard lock(state_->mutex);
    const auto it = std::find_if(state_->entries.begin(), state_->entries.end(),
                                 [&](const auto& e) { return e->spec->name == name; });
    if (it == state_->entries.end()) return false;
    const std::shared_ptr<Entry> entry = *it;
    state_->entries.erase(it);
    if (entry->current) deferred.unloaded.push_back(std::move(entry->current));
    state_->publish(*entry);
    const auto gone = std::make_exception_ptr(Error(ErrorKind::NotFound, state_->not_served(name)));
    state_->settle_waiters(*entry, gone, deferred);
  }
  deferred.run();
  return true;
}

void ModelManager::acquire(std::string_view name, Acquired done) {
  acquire(name, std::move(done), state_->options.load_wait);
}

void ModelManager::acquire(std::string_view name, Acquired done, std::chrono::milliseconds wait) {
  std::exception_ptr error;
  LeasePtr lease;
  {
    const std::lock_guard lock(state_->mutex);
    const auto entry = state_->find(name);
    if (!entry) {
      error = std::make_exception_ptr(Error(ErrorKind::NotFound, state_->not_served(name)));
    } else if (entry->current) {
      state_->touch(*entry);
      ++entry->hits;
      if (state_->metrics != nullptr) entry->metrics.hits->inc();
      lease = state_->lease(*entry);
    } else if (state_->stopping) {
      error = std::make_exception_ptr(Error(ErrorKind::Io, "the model manager is shutting down"));
    } else {
      state_->touch(*entry);
      if (state_->metrics != nullptr) entry->metrics.misses->inc();
      Waiter waiter{std::move(done), std::nullopt};
      if (wait.count() > 0) waiter.deadline = Clock::now() + wait;
      const bool timed = waiter.deadline.has_value();
      entry->waiters.push_back(std::move(waiter));
      if (!entry->loading) {  // one load for any number of waiters
        entry->loading = true;
        state_->enqueue({entry, nullptr, nullptr});
      }
      if (timed) state_->waiters_changed.notify_all();
      return;
    }
  }
  done(std::move(lease), std::move(error));
}

LeasePtr ModelManager::acquire_sync(std::string_view name) {
  std::promise<LeasePtr> promise;
  auto future = promise.get_future();
  acquire(
      name,
      [&promise](LeasePtr lease, std::exception_ptr error) {
        if (error) {
          promise.set_exception(std::move(error));
        } else {
          promise.set_value(std::move(lease));
        }
      },
      std::chrono::milliseconds{0});
  return future.get();
}

LeasePtr ModelManager::hold(std::string_view name) {
  auto lease = std::static_pointer_cast<const State::Lease>(acquire_sync(name));
  return std::make_shared<const State::Hold>(std::move(lease), state_);
}

void ModelManager::preload(const std::vector<std::string>& names) {
  for (const std::string& name : names) (void)acquire_sync(name);
}

std::optional<std::string> ModelManager::default_for(std::initializer_list<ModelKind> kinds) const {
  const std::lock_guard lock(state_->mutex);
  for (const auto& e : state_->entries) {
    if (std::find(kinds.begin(), kinds.end(), e->spec->kind) != kinds.end()) return e->spec->name;
  }
  return std::nullopt;
}

namespace {
ModelStatus status_of(const Entry& e) {
  ModelStatus s;
  s.name = e.spec->name;
  s.source = e.spec->source;
  s.kind = e.spec->kind;
  s.semantic = e.spec->semantic;
  s.pinned = e.spec->pinned;
  s.fallback_reason = e.spec->fallback_reason;
  s.dtype = e.spec->dtype;
  s.architecture = e.spec->architecture;
  if (e.current) {
    s.state = ModelState::Loaded;
    const LoadedModel& m = *e.current->model;
    s.resident_bytes = m.resident_bytes;
    s.in_flight = e.current->in_flight - e.current->held;
    if (m.embedder) s.dim = m.embedder->dim();
    if (m.classifier) s.labels = m.classifier->labels();
  } else if (e.loading) {
    s.state = ModelState::Loading;
  } else if (e.failed) {
    s.state = ModelState::Failed;
  }
  s.loads = e.loads;
  s.hits = e.hits;
  s.last_error = e.last_error;
  s.last_used_unix_ms = e.last_used_unix_ms;
  return s;
}
}  // namespace

std::optional<ModelStatus> ModelManager::status(std::string_view name) const {
  const std::lock_guard lock(state_->mutex);
  const auto entry = state_->find(name);
  if (!entry) return std::nullopt;
  return status_of(*entry);
}

std::vector<ModelStatus> ModelManager::list() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<ModelStatus> out;
  out.reserve(state_->entries.size());
  for (const auto& e : state_->entries) out.push_back(status_of(*e));
  return out;
}

std::vector<std::string> ModelManager::names() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<std::string> out;
  out.reserve(state_->entries.size());
  for (const auto& e : state_->entries) out.push_back(e->spec->name);
  return out;
}

std::size_t ModelManager::resident_bytes() const {
  const std::lock_guard lock(state_->mutex);
  return state_->resident_total();
}

}  // namespace warden::serving

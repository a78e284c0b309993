// The model manager's contract: lazy loading (one load for many first requests), LRU
// eviction under max_loaded and memory_budget (never a busy or pinned model), failed loads
// and retries, load_wait timeouts, hot swap and removal with leases that outlive both, the
// metrics, and shutdown. Fake models are hashing embedders whose loads can be held at a gate.

#include "serving/model_manager.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "embed/hashing_embedder.hpp"
#include "serving/metrics.hpp"
#include "support/metrics_text.hpp"

namespace warden::serving {
namespace {

using warden::testing::sample_value;

using namespace std::chrono_literals;

// Shared with a spec's loader: counts loads, can hold them at a gate, can make them throw.
struct FakeLoader {
  std::atomic<int> loads{0};
  std::atomic<bool> fail{false};
  std::mutex mutex;
  std::condition_variable changed;
  bool gated = false;
  int entered = 0;

  void close() {
    const std::lock_guard lock(mutex);
    gated = true;
  }
  void open() {
    const std::lock_guard lock(mutex);
    gated = false;
    changed.notify_all();
  }
  // Until `n` loads have reached the gate.
  bool wait_entered(int n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return entered >= n; });
  }
  void pass_gate() {
    std::unique_lock lock(mutex);
    ++entered;
    changed.notify_all();
    changed.wait_for(lock, 10s, [this] { return !gated; });
  }
};

ModelSpec fake_spec(const std::string& name, const std::shared_ptr<FakeLoader>& loader,
                    std::size_t bytes = 100, std::string source = "builtin") {
  ModelSpec spec;
  spec.name = name;
  spec.source = std::move(source);
  spec.semantic = false;
  spec.estimated_bytes = bytes;
  spec.load = [loader, bytes] {
    loader->pass_gate();
    ++loader->loads;
    if (loader->fail) throw Error(ErrorKind::Io, "disk on fire");
    return make_loaded_model(std::make_unique<embed::HashingEmbedder>(), bytes);
  };
  return spec;
}

// The lease's model embeds a text (the instance is alive and whole).
void expect_works(const LeasePtr& lease) {
  ASSERT_NE(lease, nullptr);
  ASSERT_NE(lease->model().embedder, nullptr);
  ASSERT_NE(lease->model().embed_runner, nullptr);
  const std::vector<std::string_view> texts{"hello world"};
  const Embeddings e = lease->model().embedder->embed(texts);
  EXPECT_EQ(e.rows(), 1U);
  EXPECT_EQ(e.dim(), embed::HashingEmbedder::kDim);
}

ModelState state_of(const ModelManager& m, std::string_view name) {
  const auto s = m.status(name);
  EXPECT_TRUE(s.has_value()) << name;
  return s ? s->state : ModelState::Unloaded;
}

// Blocks until every job queued on the loader before it has run: the loader runs jobs in
// order, so a put() of a throwaway model completes after them.
void drain_loader(ModelManager& m, const std::string& sentinel) {
  auto loader = std::make_shared<FakeLoader>();
  std::promise<std::exception_ptr> done;
  m.put(fake_spec(sentinel, loader, 1), [&done](std::exception_ptr e) { done.set_value(std::move(e)); });
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  ASSERT_EQ(f.get(), nullptr);
}

TEST(ModelManager, LoadsLazilyOnFirstAcquireAndHitsAfterwards) {
  auto loader = std::make_shared<FakeLoader>();
  ModelManager m({});
  m.add(fake_spec("a", loader));
  EXPECT_EQ(state_of(m, "a"), ModelState::Unloaded);
  EXPECT_EQ(loader->loads, 0);

  const LeasePtr first = m.acquire_sync("a");
  expect_works(first);
  EXPECT_EQ(loader->loads, 1);
  const LeasePtr second = m.acquire_sync("a");
  EXPECT_EQ(loader->loads, 1);
  EXPECT_EQ(&first->model(), &second->model());
  EXPECT_EQ(second->spec().name, "a");

  const auto s = m.status("a");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, ModelState::Loaded);
  EXPECT_EQ(model_state_name(s->state), "loaded");
  EXPECT_EQ(s->loads, 1U);
  EXPECT_EQ(s->hits, 1U);
  EXPECT_EQ(s->in_flight, 2U);
  EXPECT_EQ(s->resident_bytes, 100U);
  EXPECT_GT(s->last_used_unix_ms, 0);
  EXPECT_EQ(m.resident_bytes(), 100U);
}

TEST(ModelManager, ConcurrentFirstAcquiresShareOneLoad) {
  constexpr int kThreads = 32;
  auto loader = std::make_shared<FakeLoader>();
  loader->close();
  ModelManager m({});
  m.add(fake_spec("a", loader));

  std::mutex mutex;
  std::vector<LeasePtr> leases;
  int errors = 0;
  std::latch answered(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      m.acquire("a", [&](LeasePtr lease, std::exception_ptr error) {
        {
          const std::lock_guard lock(mutex);
          if (error) ++errors;
          leases.push_back(std::move(lease));
        }
        answered.count_down();
      });
    });
  }
  // Every acquire has registered (the model is not resident, so none answers at once).
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(loader->wait_entered(1));
  EXPECT_EQ(state_of(m, "a"), ModelState::Loading);
  loader->open();
  answered.wait();

  EXPECT_EQ(loader->loads, 1);
  EXPECT_EQ(errors, 0);
  ASSERT_EQ(leases.size(), static_cast<std::size_t>(kThreads));
  for (const LeasePtr& lease : leases) {
    ASSERT_NE(lease, nullptr);
    EXPECT_EQ(&lease->model(), &leases.front()->model());
  }
  EXPECT_EQ(m.status("a")->in_flight, static_cast<std::size_t>(kThreads));
  leases.clear();
  EXPECT_EQ(m.status("a")->in_flight, 0U);
}

TEST(ModelManager, MaxLoadedEvictsTheLeastRecentlyUsedIdleModelWhichReloads) {
  auto la = std::make_shared<FakeLoader>();
  auto lb = std::make_shared<FakeLoader>();
  auto lc = std::make_shared<FakeLoader>();
  ModelManager m({.max_loaded = 2});
  m.add(fake_spec("a", la));
  m.add(fake_spec("b", lb));
  m.add(fake_spec("c", lc));

  (void)m.acquire_sync("a");
  (void)m.acquire_sync("b");
  (void)m.acquire_sync("a");  // a is now more recent than b
  (void)m.acquire_sync("c");
  EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  EXPECT_EQ(state_of(m, "b"), ModelState::Unloaded);
  EXPECT_EQ(state_of(m, "c"), ModelState::Loaded);

  const LeasePtr b = m.acquire_sync("b");  // reloads; a is now the least recent
  expect_works(b);
  EXPECT_EQ(lb->loads, 2);
  EXPECT_EQ(m.status("b")->loads, 2U);
  EXPECT_EQ(state_of(m, "a"), ModelState::Unloaded);
  EXPECT_EQ(state_of(m, "c"), ModelState::Loaded);
  EXPECT_EQ(la->loads, 1);
  EXPECT_EQ(lc->loads, 1);
}

TEST(ModelManager, AModelWithALeaseIsNeverEvicted) {
  auto la = std::make_shared<FakeLoader>();
  auto lb = std::make_shared<FakeLoader>();
  ModelManager m({.max_loaded = 1});
  m.add(fake_spec("a", la));
  m.add(fake_spec("b", lb));

  LeasePtr a = m.acquire_sync("a");
  LeasePtr b = m.acquire_sync("b");  // a is busy: b loads anyway, past the bound
  EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  EXPECT_EQ(state_of(m, "b"), ModelState::Loaded);
  expect_works(a);
  expect_works(b);

  a.reset();  // a just answered (it stays) and b is busy: still past the bound
  EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  EXPECT_EQ(state_of(m, "b"), ModelState::Loaded);
  expect_works(b);
  b.reset();  // the bound is enforced again: a is idle and the least recently used
  EXPECT_EQ(state_of(m, "a"), ModelState::Unloaded);
  EXPECT_EQ(state_of(m, "b"), ModelState::Loaded);
}

TEST(ModelManager, MemoryBudgetEvictsByBytes) {
  auto l = std::make_shared<FakeLoader>();
  ModelManager m({.memory_budget = 250});
  m.add(fake_spec("a", l, 100));
  m.add(fake_spec("b", l, 100));
  m.add(fake_spec("c", l, 100));
  (void)m.acquire_sync("a");
  (void)m.acquire_sync("b");
  EXPECT_EQ(m.resident_bytes(), 200U);
  (void)m.acquire_sync("c");
  EXPECT_EQ(state_of(m, "a"), ModelState::Unloaded);
  EXPECT_EQ(state_of(m, "b"), ModelState::Loaded);
  EXPECT_EQ(state_of(m, "c"), ModelState::Loaded);
  EXPECT_EQ(m.resident_bytes(), 200U);
  EXPECT_EQ(m.status("a")->resident_bytes, 0U);
}

TEST(ModelManager, APinnedModelIsNeverEvicted) {
  auto l = std::make_shared<FakeLoader>();
  ModelManager m({.max_loaded = 1});
  ModelSpec pinned = fake_spec("guard", l);
  pinned.pinned = true;
  m.add(std::move(pinned));
  m.add(fake_spec("a", l));
  m.add(fake_spec("b", l));

  (void)m.acquire_sync("guard");
  {
    const LeasePtr a = m.acquire_sync("a");  // past the bound: guard cannot go, a is busy
    EXPECT_EQ(state_of(m, "guard"), ModelState::Loaded);
    EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  }
  // a's lease ended: a just answered, so it stays (past the bound) rather than be unloaded
  // after every request beside a pinned model; the next load makes room.
  EXPECT_EQ(state_of(m, "guard"), ModelState::Loaded);
  EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  const LeasePtr b = m.acquire_sync("b");
  EXPECT_EQ(state_of(m, "guard"), ModelState::Loaded);
  EXPECT_EQ(state_of(m, "a"), ModelState::Unloaded);
  EXPECT_EQ(state_of(m, "b"), ModelState::Loaded);
  EXPECT_TRUE(m.status("guard")->pinned);
}

TEST(ModelManager, AFailedLoadFailsItsWaitersAndTheNextAcquireRetries) {
  constexpr int kWaiters = 3;
  auto l = std::make_shared<FakeLoader>();
  l->fail = true;
  l->close();
  ModelManager m({});
  m.add(fake_spec("a", l));

  std::vector<std::promise<std::exception_ptr>> results(kWaiters);
  for (auto& r : results) {
    m.acquire("a", [&r](LeasePtr lease, std::exception_ptr error) {
      EXPECT_EQ(lease, nullptr);
      r.set_value(std::move(error));
    });
  }
  l->open();
  for (auto& r : results) {
    auto f = r.get_future();
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
    const std::exception_ptr error = f.get();
    ASSERT_NE(error, nullptr);
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Io);
      EXPECT_STREQ(e.what(), "disk on fire");
    }
  }
  EXPECT_EQ(l->loads, 1);
  auto s = m.status("a");
  EXPECT_EQ(s->state, ModelState::Failed);
  EXPECT_EQ(model_state_name(s->state), "failed");
  EXPECT_EQ(s->last_error, "disk on fire");

  EXPECT_THROW((void)m.acquire_sync("a"), Error);  // retried, failed again
  EXPECT_EQ(l->loads, 2);
  l->fail = false;
  const LeasePtr lease = m.acquire_sync("a");
  expect_works(lease);
  EXPECT_EQ(l->loads, 3);
  s = m.status("a");
  EXPECT_EQ(s->state, ModelState::Loaded);
  EXPECT_EQ(s->last_error, "");
}

TEST(ModelManager, LoadWaitTimesOutTheWaiterWhileTheLoadGoesOn) {
  auto l = std::make_shared<FakeLoader>();
  l->close();
  ModelManager m({.load_wait = 20ms});
  m.add(fake_spec("a", l));

  std::promise<std::exception_ptr> result;
  m.acquire("a", [&result](LeasePtr lease, std::exception_ptr error) {
    EXPECT_EQ(lease, nullptr);
    result.set_value(std::move(error));
  });
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  const std::exception_ptr error = f.get();
  ASSERT_NE(error, nullptr);
  try {
    std::rethrow_exception(error);
  } catch (const ModelLoadTimeout& e) {
    EXPECT_EQ(std::string(e.what()), "model a is still loading after 20 ms");
  }
  EXPECT_EQ(state_of(m, "a"), ModelState::Loading);

  l->open();
  drain_loader(m, "sentinel");  // the load of a has finished
  EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  const LeasePtr lease = m.acquire_sync("a");
  expect_works(lease);
  EXPECT_EQ(l->loads, 1);
  EXPECT_EQ(m.status("a")->hits, 1U);
}

// load_wait bounds a request's wait; start-up (acquire_sync, preload) waits for the load.
TEST(ModelManager, AcquireSyncAndPreloadIgnoreLoadWait) {
  auto l = std::make_shared<FakeLoader>();
  l->close();
  ModelManager m({.load_wait = 1ms});
  m.add(fake_spec("a", l));
  std::thread opener([&l] {
    std::this_thread::sleep_for(100ms);
    l->open();
  });
  EXPECT_NO_THROW(m.preload({"a"}));
  opener.join();
  expect_works(m.acquire_sync("a"));
  EXPECT_EQ(l->loads, 1);
}

// A hold keeps the model for a part of the server (the guard) without counting as a request.
TEST(ModelManager, AHoldIsNotARequestInFlight) {
  auto l = std::make_shared<FakeLoader>();
  ModelManager m({});
  m.add(fake_spec("a", l));
  const LeasePtr held = m.hold("a");
  expect_works(held);
  EXPECT_EQ(m.status("a")->in_flight, 0U);
  {
    const LeasePtr request = m.acquire_sync("a");
    EXPECT_EQ(m.status("a")->in_flight, 1U);
  }
  EXPECT_EQ(m.status("a")->in_flight, 0U);
  EXPECT_EQ(m.status("a")->state, ModelState::Loaded);
}

TEST(ModelManager, AnUnknownNameIsNotFoundAndListsTheServedNames) {
  auto l = std::make_shared<FakeLoader>();
  ModelManager m({});
  m.add(fake_spec("a", l));
  m.add(fake_spec("b", l));

  bool called = false;
  m.acquire("x", [&called](LeasePtr lease, std::exception_ptr error) {
    called = true;
    EXPECT_EQ(lease, nullptr);
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::NotFound);
      EXPECT_STREQ(e.what(), "model 'x' is not served; available: a, b");
    }
  });
  EXPECT_TRUE(called);  // synchronously
  EXPECT_THROW((void)m.acquire_sync("x"), Error);
  EXPECT_FALSE(m.status("x").has_value());
  EXPECT_EQ(m.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(m.add(fake_spec("a", l)), Error);  // taken
  EXPECT_THROW(m.add(fake_spec("", l)), Error);
}

TEST(ModelManager, PutSwapsInANewInstanceWhileOldLeasesFinishOnTheOld) {
  auto v1 = std::make_shared<FakeLoader>();
  auto v2 = std::make_shared<FakeLoader>();
  ModelManager m({});
  m.add(fake_spec("a", v1, 100, "v1"));
  const LeasePtr old_lease = m.acquire_sync("a");

  std::promise<std::exception_ptr> done;
  m.put(fake_spec("a", v2, 300, "v2"), [&done](std::exception_ptr e) { done.set_value(std::move(e)); });
  ASSERT_EQ(done.get_future().get(), nullptr);

  const LeasePtr new_lease = m.acquire_sync("a");
  EXPECT_NE(&old_lease->model(), &new_lease->model());
  EXPECT_EQ(old_lease->spec().source, "v1");
  EXPECT_EQ(new_lease->spec().source, "v2");
  expect_works(old_lease);
  expect_works(new_lease);
  EXPECT_EQ(v2->loads, 1);
  const auto s = m.status("a");
  EXPECT_EQ(s->source, "v2");
  EXPECT_EQ(s->in_flight, 1U);  // the current instance's leases only
  EXPECT_EQ(m.resident_bytes(), 300U);

  // put() of a new name adds it.
  std::promise<std::exception_ptr> added;
  m.put(fake_spec("b", v2), [&added](std::exception_ptr e) { added.set_value(std::move(e)); });
  ASSERT_EQ(added.get_future().get(), nullptr);
  EXPECT_EQ(m.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(state_of(m, "b"), ModelState::Loaded);
}

TEST(ModelManager, AFailedPutLeavesTheOldModel) {
  auto v1 = std::make_shared<FakeLoader>();
  auto bad = std::make_shared<FakeLoader>();
  bad->fail = true;
  ModelManager m({});
  m.add(fake_spec("a", v1, 100, "v1"));
  const LeasePtr before = m.acquire_sync("a");

  std::promise<std::exception_ptr> done;
  m.put(fake_spec("a", bad, 100, "v2"), [&done](std::exception_ptr e) { done.set_value(std::move(e)); });
  EXPECT_NE(done.get_future().get(), nullptr);

  const LeasePtr after = m.acquire_sync("a");
  EXPECT_EQ(&before->model(), &after->model());
  EXPECT_EQ(after->spec().source, "v1");
  EXPECT_EQ(m.status("a")->source, "v1");
  EXPECT_EQ(v1->loads, 1);
}

TEST(ModelManager, RemoveForgetsTheNameButNotItsLeases) {
  auto l = std::make_shared<FakeLoader>();
  ModelManager m({});
  m.add(fake_spec("a", l));
  m.add(fake_spec("b", l));
  const LeasePtr lease = m.acquire_sync("a");

  EXPECT_TRUE(m.remove("a"));
  EXPECT_FALSE(m.remove("a"));
  try {
    (void)m.acquire_sync("a");
    ADD_FAILURE() << "acquired a removed model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_STREQ(e.what(), "model 'a' is not served; available: b");
  }
  expect_works(lease);
  EXPECT_EQ(m.names(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(m.resident_bytes(), 0U);
}

TEST(ModelManager, DefaultForPicksTheFirstModelOfTheKind) {
  auto l = std::make_shared<FakeLoader>();
  ModelManager m({});
  ModelSpec e1 = fake_spec("e1", l);
  ModelSpec r1 = fake_spec("r1", l);
  r1.kind = ModelKind::Reranker;
  ModelSpec e2 = fake_spec("e2", l);
  m.add(std::move(e1));
  m.add(std::move(r1));
  m.add(std::move(e2));
  EXPECT_EQ(m.default_for({ModelKind::Embedding}), "e1");
  EXPECT_EQ(m.default_for({ModelKind::Classifier, ModelKind::Reranker}), "r1");
  EXPECT_EQ(m.default_for({ModelKind::Classifier}), std::nullopt);
  const auto all = m.list();
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[1].name, "r1");
  EXPECT_EQ(all[1].kind, ModelKind::Reranker);
  EXPECT_EQ(l->loads, 0);
}

TEST(ModelManager, MetricsCountLoadsHitsMissesFailuresAndEvictions) {
  MetricsRegistry registry;
  auto la = std::make_shared<FakeLoader>();
  auto lb = std::make_shared<FakeLoader>();
  auto bad = std::make_shared<FakeLoader>();
  bad->fail = true;
  auto lc = std::make_shared<FakeLoader>();
  ModelManager m({.memory_budget = 150}, &registry);
  m.add(fake_spec("a", la, 100));
  m.add(fake_spec("b", lb, 40));
  m.add(fake_spec("bad", bad, 0));
  m.add(fake_spec("c", lc, 100));

  (void)m.acquire_sync("a");  // miss, load
  (void)m.acquire_sync("a");  // hit
  (void)m.acquire_sync("b");  // miss, load (140 bytes)
  EXPECT_THROW((void)m.acquire_sync("bad"), Error);
  (void)m.acquire_sync("c");  // miss, load, evicts a (the least recent) to fit 150

  const std::string text = registry.render();
  EXPECT_EQ(sample_value(text, "warden_model_loads_total{model=\"a\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_loads_total{model=\"b\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_requests_total{model=\"a\",result=\"hit\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_requests_total{model=\"a\",result=\"miss\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_requests_total{model=\"b\",result=\"miss\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_evictions_total{model=\"a\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_requests_total{model=\"c\",result=\"miss\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_evictions_total{model=\"b\"}"), 0);
  EXPECT_EQ(sample_value(text, "warden_model_load_failures_total{model=\"bad\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_load_failures_total{model=\"a\"}"), 0);
  EXPECT_EQ(sample_value(text, "warden_model_loaded{model=\"a\"}"), 0);
  EXPECT_EQ(sample_value(text, "warden_model_loaded{model=\"b\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_resident_bytes{model=\"a\"}"), 0);
  EXPECT_EQ(sample_value(text, "warden_model_resident_bytes{model=\"b\"}"), 40);
  EXPECT_EQ(sample_value(text, "warden_model_resident_bytes{model=\"c\"}"), 100);
  EXPECT_EQ(sample_value(text, "warden_models_resident_bytes"), 140);
  EXPECT_EQ(sample_value(text, "warden_model_load_seconds_count{model=\"a\"}"), 1);
  EXPECT_EQ(sample_value(text, "warden_model_load_seconds_bucket{model=\"a\",le=\"+Inf\"}"), 1);
}

TEST(ModelManager, DestroyingTheManagerFailsPendingWaiters) {
  auto la = std::make_shared<FakeLoader>();
  auto lb = std::make_shared<FakeLoader>();
  auto m = std::make_unique<ModelManager>(ModelManagerOptions{});
  ModelManager* manager = m.get();
  // a's load holds the loader until the manager is stopping, which it sees as an acquire
  // of the non-resident b failing at once with Io; b's queued load then never runs.
  auto answered_at_once = std::make_shared<std::atomic<int>>(0);
  ModelSpec a = fake_spec("a", la);
  a.load = [manager, answered_at_once, la] {
    la->pass_gate();  // tells the test the load has started
    for (;;) {
      const int before = answered_at_once->load();
      manager->acquire("b", [answered_at_once](LeasePtr, std::exception_ptr) { ++*answered_at_once; });
      if (answered_at_once->load() > before) break;
      std::this_thread::yield();
    }
    return make_loaded_model(std::make_unique<embed::HashingEmbedder>(), 100);
  };
  m->add(std::move(a));
  m->add(fake_spec("b", lb));

  std::promise<std::exception_ptr> a_result;
  std::promise<std::exception_ptr> b_result;
  m->acquire("a", [&a_result](LeasePtr lease, std::exception_ptr e) {
    EXPECT_NE(lease, nullptr);
    a_result.set_value(std::move(e));
  });
  m->acquire("b", [&b_result](LeasePtr lease, std::exception_ptr e) {
    EXPECT_EQ(lease, nullptr);
    b_result.set_value(std::move(e));
  });
  ASSERT_TRUE(la->wait_entered(1));
  m.reset();

  EXPECT_EQ(a_result.get_future().get(), nullptr);  // the load in progress finished
  const std::exception_ptr error = b_result.get_future().get();
  ASSERT_NE(error, nullptr);
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_STREQ(e.what(), "the model manager is shutting down");
  }
  EXPECT_EQ(lb->loads, 0);
}

TEST(ModelManager, LeasesOutliveTheManager) {
  MetricsRegistry registry;
  auto l = std::make_shared<FakeLoader>();
  LeasePtr lease;
  {
    ModelManager m({.max_loaded = 1}, &registry);
    m.add(fake_spec("a", l));
    lease = m.acquire_sync("a");
  }
  expect_works(lease);
  lease.reset();
  EXPECT_EQ(l->loads, 1);
}

TEST(ModelManager, PreloadLoadsAheadAndThrowsTheFirstFailure) {
  auto l = std::make_shared<FakeLoader>();
  auto bad = std::make_shared<FakeLoader>();
  bad->fail = true;
  ModelManager m({});
  m.add(fake_spec("a", l));
  m.add(fake_spec("bad", bad));
  m.preload({"a"});
  EXPECT_EQ(state_of(m, "a"), ModelState::Loaded);
  EXPECT_THROW(m.preload({"bad"}), Error);
  EXPECT_EQ(state_of(m, "bad"), ModelState::Failed);
}

}  // namespace
}  // namespace warden::serving

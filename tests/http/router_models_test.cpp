// Many models behind one router (src/serving/model_manager.hpp): routing by the body's
// `model` and by /models/{name}/ prefixes, the default of each kind, unknown names (404
// listing what is served), lazy loading (one load under many concurrent first requests),
// LRU eviction and reload, load failures and timeouts, the fallback marking, and the
// admin routes (auth, list, hot swap with a request in flight, remove).

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "catalog/model_catalog.hpp"
#include "classify/sequence_classifier.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "http/service.hpp"
#include "kernels/dense.hpp"
#include "serving/metrics.hpp"
#include "serving/model_manager.hpp"
#include "support/classifier_goldens.hpp"
#include "support/gated_embedder.hpp"
#include "support/golden_fixture.hpp"
#include "support/handler_client.hpp"

namespace warden::http {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::call_handler;
using testing::HandlerAnswer;
using testing::send_to;

constexpr const char* kKey = "Bearer sesame";

// A hashing embedder spec that counts its loads; `gate` (optional) holds each load until opened.
struct CountingSpec {
  std::shared_ptr<std::atomic<int>> loads = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::promise<void>> gate;
  std::shared_future<void> gate_open;
  bool fail = false;

  serving::ModelSpec spec(const std::string& name) const {
    serving::ModelSpec s;
    s.name = name;
    s.source = "hashing-ngram-256";
    s.semantic = false;
    s.tier = "builtin";
    s.estimated_bytes = 1000;
    s.load = [loads = loads, open = gate_open, fail = fail] {
      loads->fetch_add(1);
      if (open.valid()) open.wait_for(10s);
      if (fail) throw Error(ErrorKind::CorruptFile, "model.safetensors: tensor x is missing");
      return serving::make_loaded_model(
          std::unique_ptr<embed::Embedder>(std::make_unique<embed::HashingEmbedder>()), 1000);
    };
    return s;
  }
};

struct Fixture {
  explicit Fixture(serving::ModelManagerOptions mo = {}, std::string api_key = "sesame")
      : models(mo, &metrics) {
    ServiceOptions o;
    o.workers = 2;
    o.router.api_key = std::move(api_key);
    o.router.make_spec = [](const std::string& name, const std::string& source,
                            const std::string& /*dtype*/) {
      if (source != "hashing-ngram-256") throw Error(ErrorKind::NotFound, "no folder " + source);
      return CountingSpec{}.spec(name.empty() ? source : name);
    };
    options = o;
  }
  void start() { service = std::make_unique<Service>(models, nullptr, options, &metrics); }
  HandlerAnswer post(const std::string& target, const std::string& body) {
    return call_handler(service->handler(), "POST", target, body, kKey);
  }
  HandlerAnswer get(const std::string& target) {
    return call_handler(service->handler(), "GET", target, {}, kKey);
  }

  serving::MetricsRegistry metrics;
  serving::ModelManager models;
  ServiceOptions options;
  std::unique_ptr<Service> service;
};

// A request's lease ends when its call is destroyed, just after its answer is handed over:
// residency settles a moment after the answer arrives. Waits (at most 5 s) for `state`.
serving::ModelState settled_state(const serving::ModelManager& m, const std::string& name,
                                  serving::ModelState state) {
  for (int i = 0; i < 500 && m.status(name)->state != state; ++i) std::this_thread::sleep_for(10ms);
  return m.status(name)->state;
}

std::string model_header(const HandlerAnswer& a) {
  const auto it = a.headers.find("X-Warden-Model");
  return it == a.headers.end() ? "" : it->second;
}

TEST(RouterModels, RoutesByBodyFieldPathPrefixAndDefault) {
  Fixture f;
  CountingSpec a, b;
  f.models.add(a.spec("alpha"));
  f.models.add(b.spec("org/beta"));  // an HF-style name, with a slash
  f.start();

  HandlerAnswer r = f.post("/embed", R"({"inputs": "hello"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(model_header(r), "alpha");  // the first embedding model is the default
  EXPECT_EQ(r.headers["X-Warden-Semantic"], "false");

  r = f.post("/embed", R"({"inputs": "hello", "model": "org/beta"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(model_header(r), "org/beta");

  r = f.post("/models/org/beta/embed", R"({"inputs": "hello"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(model_header(r), "org/beta");
  r = f.post("/models/org%2Fbeta/embed", R"({"inputs": "hello"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(model_header(r), "org/beta");

  r = f.post("/v1/embeddings", R"({"input": "hello", "model": "org/beta"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("model":"org/beta")"), std::string::npos) << r.body;
  r = f.post("/models/alpha/v1/embeddings", R"({"input": "hello"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("model":"alpha")"), std::string::npos) << r.body;

  // Both loaded once, on first use.
  EXPECT_EQ(a.loads->load(), 1);
  EXPECT_EQ(b.loads->load(), 1);
}

// --strict-model-names: a name no served model has is 404, listing the ones there are.
TEST(RouterModels, UnknownModelIs404ListingTheServedOnes) {
  Fixture f;
  f.options.router.strict_model_names = true;
  CountingSpec a, b;
  f.models.add(a.spec("alpha"));
  f.models.add(b.spec("beta"));
  f.start();
  HandlerAnswer r = f.post("/embed", R"({"inputs": "hello", "model": "gamma"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("gamma"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("alpha, beta"), std::string::npos) << r.body;
  // Under /v1/ the error is OpenAI's object, also behind a path prefix.
  r = f.post("/models/gamma/v1/embeddings", R"({"input": "hello"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find(R"("type":"invalid_request_error")"), std::string::npos) << r.body;
  // A prefix before a route that does not exist is just a missing route.
  r = f.post("/models/alpha/nothing", R"({})");
  EXPECT_EQ(r.status, 404);
  // A malformed body is still 422 first, before the model is looked up.
  r = f.post("/embed", R"({"inputs": 3, "model": "gamma"})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(a.loads->load(), 0);
}

// By default a name no served model has (text-embedding-3-small, rerank-english-v3.0: what
// code written for the hosted APIs sends) goes to the route's default model, and a header
// says what was asked. A /models/{name}/ path names its model exactly: still 404.
TEST(RouterModels, UnknownBodyModelGoesToTheDefaultOfTheRightKind) {
  Fixture f;
  CountingSpec a, b;
  f.models.add(a.spec("alpha"));
  f.models.add(b.spec("beta"));
  f.start();
  for (const char* name : {"text-embedding-ada-002", "text-embedding-3-small"}) {
    HandlerAnswer r =
        f.post("/v1/embeddings", std::string(R"({"input": "hello", "model": ")") + name + R"("})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(model_header(r), "alpha");
    EXPECT_EQ(r.header("X-Warden-Requested-Model"), name);
    EXPECT_NE(r.body.find(R"("model":"alpha")"), std::string::npos) << r.body;
  }
  HandlerAnswer r = f.post("/embed", R"({"inputs": "hello", "model": "beta"})");
  EXPECT_EQ(model_header(r), "beta");
  EXPECT_EQ(r.header("X-Warden-Requested-Model"), "<absent>");
  EXPECT_EQ(f.post("/models/gamma/embed", R"({"inputs": "hello"})").status, 404);
  // The default of the route's kind: an embedding route never lands on a reranker.
  r = f.post("/v1/rerank", R"({"query": "q", "documents": ["a"], "model": "rerank-english-v3.0"})");
  EXPECT_EQ(r.status, 424) << r.body;  // no reranker here: the first model, which cannot rerank
  EXPECT_EQ(r.header("X-Warden-Requested-Model"), "rerank-english-v3.0");
}

TEST(RouterModels, ListsModelsWithoutLoadingThem) {
  Fixture f;
  CountingSpec a, b;
  f.models.add(a.spec("alpha"));
  f.models.add(b.spec("beta"));
  f.start();
  HandlerAnswer r = f.get("/v1/models");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"("id":"alpha")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("id":"beta")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("state":"unloaded")"), std::string::npos) << r.body;
  EXPECT_EQ(a.loads->load() + b.loads->load(), 0);
  // /info describes (and so loads) the default model, and lists every name.
  r = f.get("/info");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("model_id":"alpha")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("models":["alpha","beta"])"), std::string::npos) << r.body;
  r = f.get("/models/beta/info");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("model_id":"beta")"), std::string::npos) << r.body;
}

TEST(RouterModels, ManyConcurrentFirstRequestsLoadOnce) {
  Fixture f;
  CountingSpec a;
  auto gate = std::make_shared<std::promise<void>>();
  a.gate = gate;
  a.gate_open = gate->get_future().share();
  f.models.add(a.spec("alpha"));
  f.start();
  std::vector<std::future<HandlerAnswer>> answers;
  for (int i = 0; i < 24; ++i) {
    answers.push_back(send_to(f.service->handler(), "POST", "/embed", R"({"inputs": "hello"})", kKey));
  }
  gate->set_value();
  for (auto& fut : answers) {
    ASSERT_EQ(fut.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(fut.get().status, 200);
  }
  EXPECT_EQ(a.loads->load(), 1);
  const std::string text = f.metrics.render();
  EXPECT_NE(text.find("warden_model_loads_total{model=\"alpha\"} 1"), std::string::npos) << text;
}

TEST(RouterModels, EvictsTheLeastRecentlyUsedAndReloadsIt) {
  serving::ModelManagerOptions mo;
  mo.max_loaded = 1;
  Fixture f(mo);
  CountingSpec a, b;
  f.models.add(a.spec("alpha"));
  f.models.add(b.spec("beta"));
  f.start();
  const HandlerAnswer first = f.post("/embed", R"({"inputs": "same text", "model": "alpha"})");
  ASSERT_EQ(first.status, 200);
  // A lease ends just after its answer is sent; while it lives alpha is busy and cannot be
  // unloaded (and the manager never unloads the model whose lease just ended), so beta is
  // asked for only once alpha is idle.
  for (int i = 0; i < 500 && f.models.status("alpha")->in_flight != 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(f.post("/embed", R"({"inputs": "x", "model": "beta"})").status, 200);
  for (int i = 0; i < 500 && f.models.status("beta")->in_flight != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(settled_state(f.models, "alpha", serving::ModelState::Unloaded), serving::ModelState::Unloaded);
  const HandlerAnswer again = f.post("/embed", R"({"inputs": "same text", "model": "alpha"})");
  ASSERT_EQ(again.status, 200);
  EXPECT_EQ(again.body, first.body);  // the reloaded model answers the same
  EXPECT_EQ(a.loads->load(), 2);
  EXPECT_EQ(settled_state(f.models, "beta", serving::ModelState::Unloaded), serving::ModelState::Unloaded);
}

TEST(RouterModels, LoadFailureIs500AndRetried) {
  Fixture f;
  CountingSpec bad;
  bad.fail = true;
  f.models.add(bad.spec("broken"));
  f.start();
  HandlerAnswer r = f.post("/embed", R"({"inputs": "hello"})");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("failed to load"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("tensor x is missing"), std::string::npos) << r.body;
  r = f.post("/embed", R"({"inputs": "hello"})");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(bad.loads->load(), 2);  // a failed load is tried again by the next request
}

TEST(RouterModels, SlowLoadAnswers503WithinTheLoadWait) {
  serving::ModelManagerOptions mo;
  mo.load_wait = 100ms;
  Fixture f(mo);
  CountingSpec a;
  auto gate = std::make_shared<std::promise<void>>();
  a.gate = gate;
  a.gate_open = gate->get_future().share();
  f.models.add(a.spec("alpha"));
  f.start();
  HandlerAnswer r = f.post("/embed", R"({"inputs": "hello"})");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(r.headers["Retry-After"], "1");
  gate->set_value();
  // The load went on: once it is done, requests are answered.
  for (int i = 0; i < 100 && f.models.status("alpha")->state != serving::ModelState::Loaded; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(f.post("/embed", R"({"inputs": "hello"})").status, 200);
  EXPECT_EQ(a.loads->load(), 1);
}

TEST(RouterModels, FallbackIsMarkedInHeadersAndInfo) {
  Fixture f;
  CountingSpec a;
  serving::ModelSpec s = a.spec("bge");
  s.fallback_reason = "model 'bge': folder /nowhere does not exist";
  s.tier = "lexical-fallback";
  s.tier_reason = s.fallback_reason;
  f.models.add(std::move(s));
  f.start();
  HandlerAnswer r = f.post("/embed", R"({"inputs": "hello"})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["X-Warden-Fallback"], "hashing-ngram-256");
  EXPECT_EQ(r.headers["X-Warden-Semantic"], "false");
  r = f.get("/info");
  EXPECT_NE(r.body.find(R"("fallback_reason":"model 'bge': folder /nowhere does not exist")"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find(R"("semantic":false)"), std::string::npos) << r.body;
}

TEST(RouterModels, WrongKindIs424AndTheRouteDefaultPicksTheRightKind) {
  const fs::path dir = warden::testing::make_classifier_fixture("bert-reranker");
  ThreadPool pool(1);
  {
    Fixture f;
    CountingSpec a;
    f.models.add(a.spec("embedder"));
    serving::ModelSpec rr;
    rr.name = "reranker";
    rr.source = dir.string();
    rr.kind = ModelKind::Reranker;
    rr.load = [dir, &pool] {
      return serving::make_loaded_model(std::unique_ptr<classify::SequenceClassifier>(
                                            std::make_unique<classify::NeuralClassifier>(dir, &pool)),
                                        0);
    };
    f.models.add(std::move(rr));
    f.start();
    HandlerAnswer r = f.post("/rerank", R"({"query": "q", "texts": ["a", "b"]})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(model_header(r), "reranker");
    r = f.post("/embed", R"({"inputs": "a"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(model_header(r), "embedder");
    r = f.post("/embed", R"({"inputs": "a", "model": "reranker"})");
    EXPECT_EQ(r.status, 424) << r.body;
    r = f.post("/rerank", R"({"query": "q", "texts": ["a"], "model": "embedder"})");
    EXPECT_EQ(r.status, 424) << r.body;
    r = f.post("/v1/rerank", R"({"query": "q", "documents": ["a"], "model": "reranker"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("model":"reranker")"), std::string::npos) << r.body;
    // The longest route wins: this is /v1/rerank on "reranker", not /rerank on "reranker/v1".
    r = f.post("/models/reranker/v1/rerank", R"({"query": "q", "documents": ["a"]})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("relevance_score")"), std::string::npos) << r.body;
  }
  fs::remove_all(dir);
}

TEST(RouterModels, AdminRoutesNeedTheKeyAndAreClosedWithoutOne) {
  {
    Fixture f({}, "");
    CountingSpec a;
    f.models.add(a.spec("alpha"));
    f.start();
    EXPECT_EQ(call_handler(f.service->handler(), "GET", "/admin/models").status, 403);
  }
  Fixture f;
  CountingSpec a;
  f.models.add(a.spec("alpha"));
  f.start();
  EXPECT_EQ(call_handler(f.service->handler(), "GET", "/admin/models").status, 401);
  EXPECT_EQ(call_handler(f.service->handler(), "GET", "/admin/models", {}, "Bearer wrong").status, 401);
  const HandlerAnswer r = f.get("/admin/models");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"("name":"alpha")"), std::string::npos) << r.body;
  EXPECT_EQ(call_handler(f.service->handler(), "PUT", "/admin/models", "{}", kKey).status, 405);
}

TEST(RouterModels, AdminAddsRemovesAndRefusesBadSources) {
  Fixture f;
  CountingSpec a;
  f.models.add(a.spec("alpha"));
  f.start();
  HandlerAnswer r = f.post("/admin/models", R"({"model": "hashing-ngram-256", "name": "gamma"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"("state":"loaded")"), std::string::npos) << r.body;
  EXPECT_EQ(model_header(f.post("/models/gamma/embed", R"({"inputs": "x"})")), "gamma");

  r = f.post("/admin/models", R"({"model": "/nowhere/at/all"})");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("/nowhere/at/all"), std::string::npos) << r.body;
  EXPECT_EQ(f.post("/admin/models", R"({"name": "x"})").status, 422);
  EXPECT_EQ(f.post("/admin/models", "not json").status, 422);

  r = call_handler(f.service->handler(), "DELETE", "/admin/models/gamma", {}, kKey);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.post("/models/gamma/embed", R"({"inputs": "x"})").status, 404);
  EXPECT_EQ(call_handler(f.service->handler(), "DELETE", "/admin/models/gamma", {}, kKey).status, 404);
}

// Names an operator gives come from a safe alphabet; a name a request looks up never holds a
// control character; a path's name is percent-decoded the same way on every route; and no
// error repeats a name cut short at a NUL.
TEST(RouterModels, ModelNamesAreCheckedAndDecodedAlikeEverywhere) {
  Fixture f;
  CountingSpec a;
  f.models.add(a.spec("alpha"));
  f.models.add(a.spec("org/beta"));
  f.start();
  for (const char* bad : {"../x", "a/b", "a..b", ".hidden", "x\\u0000y", "new\\nline", "-x", "sp ace"}) {
    const HandlerAnswer r =
        f.post("/admin/models", std::string(R"({"model": "hashing-ngram-256", "name": ")") + bad + R"("})");
    EXPECT_EQ(r.status, 422) << bad << " " << r.body;
    EXPECT_NE(r.body.find("A-Z a-z 0-9"), std::string::npos) << r.body;
  }
  EXPECT_EQ(f.post("/admin/models", R"({"model": "hashing-ngram-256", "name": "ok-name_1.2:x"})").status,
            200);

  HandlerAnswer r = f.post("/embed", R"({"inputs": "x", "model": "alpha\u0000tail"})");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("control characters"), std::string::npos) << r.body;
  r = f.post("/models/alpha%00tail/embed", R"({"inputs": "x"})");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_NE(r.body.find("control characters"), std::string::npos) << r.body;
  r = f.post("/models/alpha%0d%0aX-Injected:%201/embed", R"({"inputs": "x"})");
  EXPECT_EQ(r.status, 404) << r.body;

  // DELETE decodes its name as the /models/{name}/ prefix does.
  r = call_handler(f.service->handler(), "DELETE", "/admin/models/org%2Fbeta", {}, kKey);
  EXPECT_EQ(r.status, 200) << r.body;
  r = call_handler(f.service->handler(), "DELETE", "/admin/models/x%00y", {}, kKey);
  EXPECT_EQ(r.status, 404) << r.body;
}

TEST(RouterModels, HotSwapLetsARequestInFlightFinishOnTheOldModel) {
  Fixture f;
  auto gated = std::make_shared<testing::GatedEmbedder>();
  serving::ModelSpec s;
  s.name = "swap";
  s.source = "gated";
  s.semantic = false;
  s.load = [gated] { return serving::make_loaded_model(std::shared_ptr<const embed::Embedder>(gated), 0); };
  f.models.add(std::move(s));
  f.start();
  auto in_flight = send_to(f.service->handler(), "POST", "/embed", R"({"inputs": "hello"})", kKey);
  ASSERT_TRUE(gated->wait_entered());
  // Replace it while the request is inside the old model's batch.
  const HandlerAnswer swapped = f.post("/admin/models", R"({"model": "hashing-ngram-256", "name": "swap"})");
  ASSERT_EQ(swapped.status, 200) << swapped.body;
  gated->open();
  ASSERT_EQ(in_flight.wait_for(20s), std::future_status::ready);
  const HandlerAnswer old_answer = in_flight.get();
  EXPECT_EQ(old_answer.status, 200);
  EXPECT_EQ(model_header(old_answer), "swap");
  // New requests run on the new instance (the gate no longer matters: it is not asked).
  EXPECT_EQ(f.post("/embed", R"({"inputs": "hello"})").status, 200);
  EXPECT_TRUE(gated.use_count() >= 1);
}

// POST /admin/models resolves sources as `warden serve` wires it: through the catalog.
void resolve_through_the_catalog(Fixture& f, ThreadPool& pool) {
  f.options.router.make_spec = [&pool](const std::string& name, const std::string& source,
                                       const std::string& dtype) {
    catalog::CatalogOptions o;
    o.pool = &pool;
    return catalog::make_model_spec(catalog::ModelArg{name, source, dtype}, o).spec;
  };
}

// POST /admin/models with "dtype", through the catalog as `warden serve` wires it:
// the model loads in that precision and its status says so; a name that is not a dtype is
// the request's 422, and so is one this build cannot run. The hashing embedder has no dtype.
TEST(RouterModels, AdminLoadsAModelInTheDtypeAsked) {
  const fs::path dir = fs::temp_directory_path() / ("warden-router-dtype-" + std::to_string(::getpid()));
  warden::testing::run_fixture_command(
      "warden-fixture --arch bert --head none --preset tiny --seed 1 --out DIR", dir);
  ThreadPool pool(1);
  {
    Fixture f;
    resolve_through_the_catalog(f, pool);
    f.start();
    HandlerAnswer r =
        f.post("/admin/models", R"({"model": ")" + dir.string() + R"(", "name": "q", "dtype": "int8"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("dtype":"int8")"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(R"("state":"loaded")"), std::string::npos) << r.body;
    ASSERT_TRUE(f.models.status("q").has_value());
    EXPECT_EQ(f.models.status("q")->dtype, "int8");
    EXPECT_EQ(f.post("/models/q/embed", R"({"inputs": "x"})").status, 200);

    // No dtype: CatalogOptions' default (float32).
    r = f.post("/admin/models", R"({"model": ")" + dir.string() + R"(", "name": "p"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(f.models.status("p")->dtype, "float32");
    // Hot swap to int8 under the same name.
    r = f.post("/admin/models", R"({"model": ")" + dir.string() + R"(", "name": "p", "dtype": "i8"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(f.models.status("p")->dtype, "int8");

    r = f.post("/admin/models", R"({"model": "hashing-ngram-256", "name": "lex", "dtype": "int8"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body.find(R"("dtype")"), std::string::npos) << r.body;
    EXPECT_EQ(f.models.status("lex")->dtype, "");

    r = f.post("/admin/models", R"({"model": ")" + dir.string() + R"(", "name": "z", "dtype": "fp64"})");
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_NE(r.body.find("`dtype`"), std::string::npos) << r.body;
    EXPECT_FALSE(f.models.status("z").has_value());
  }
  fs::remove_all(dir);
}

// A model folder whose files are not files — config.json a link to /dev/zero, a FIFO as
// config.json or tokenizer.json — answers 422 naming the file, at once, and leaves no load
// slot taken (it used to read /dev/zero until killed, and hang on a FIFO forever, four of
// them refusing every later load with 429).
TEST(RouterModels, AdminRefusesFilesThatAreNotFilesAndStaysUsable) {
  const fs::path dir = fs::temp_directory_path() / ("warden-router-notfiles-" + std::to_string(::getpid()));
  warden::testing::run_fixture_command(
      "warden-fixture --arch bert --head none --preset tiny --seed 1 --out DIR", dir / "good");
  auto copy_with = [&](const std::string& name, const std::string& file, auto make) {
    const fs::path d = dir / name;
    fs::copy(dir / "good", d, fs::copy_options::recursive);
    fs::remove(d / file);
    make(d / file);
    return d;
  };
  const fs::path zero =
      copy_with("zero", "config.json", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); });
  std::vector<fs::path> fifos;
  for (int i = 0; i < 6; ++i) {
    fifos.push_back(copy_with("fifo" + std::to_string(i), i % 2 == 0 ? "config.json" : "tokenizer.json",
                              [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); }));
  }
  ThreadPool pool(1);
  {
    Fixture f;
    resolve_through_the_catalog(f, pool);
    f.start();
    const auto start = std::chrono::steady_clock::now();
    HandlerAnswer r = f.post("/admin/models", R"({"model": ")" + zero.string() + R"(", "name": "z"})");
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_NE(r.body.find("it is a device"), std::string::npos) << r.body;
    for (const fs::path& fifo : fifos) {
      r = f.post("/admin/models", R"({"model": ")" + fifo.string() + R"(", "name": "f"})");
      EXPECT_EQ(r.status, 422) << r.body;
      EXPECT_NE(r.body.find("it is a FIFO"), std::string::npos) << r.body;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    // Every slot is free: a good folder loads.
    r = f.post("/admin/models", R"({"model": ")" + (dir / "good").string() + R"(", "name": "g"})");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(f.post("/models/g/embed", R"({"inputs": "x"})").status, 200);
  }
  fs::remove_all(dir);
}

// Every way of describing a model names the architecture it runs as: /info, /v1/models and
// /admin/models, for a JinaBERT reranker (a remote-code config) and a built-in.
TEST(RouterModels, InfoAndModelListsNameTheArchitecture) {
  const fs::path dir = fs::temp_directory_path() / ("warden-router-arch-" + std::to_string(::getpid()));
  warden::testing::run_fixture_command(
      "warden-fixture --arch jina-bert --head reranker --preset tiny --seed 1 --out DIR", dir);
  ThreadPool pool(1);
  {
    Fixture f;
    resolve_through_the_catalog(f, pool);
    f.start();
    HandlerAnswer r = f.post("/admin/models", R"({"model": ")" + dir.string() + R"(", "name": "jina"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("architecture":"JinaBertForSequenceClassification")"), std::string::npos)
        << r.body;
    r = f.get("/v1/models");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("architecture":"JinaBertForSequenceClassification")"), std::string::npos)
        << r.body;
    r = f.get("/models/jina/info");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("architecture":"JinaBertForSequenceClassification")"), std::string::npos)
        << r.body;
    EXPECT_EQ(f.post("/models/jina/rerank", R"({"query": "q", "texts": ["a", "b"]})").status, 200);
    r = f.post("/admin/models", R"({"model": "hashing-ngram-256", "name": "lex"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find(R"("architecture":"hashing-ngram-256")"), std::string::npos) << r.body;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden::http

namespace warden {
namespace {

// A Qwen3 folder without sentence-transformers files is a yes/no reranker (its config names no
// labels), whatever transformers' two default labels say; `--pooling` overrides the job and
// serves it as an embedder so pooled.
TEST(RouterModels, AQwen3FolderWithoutPoolingIsARerankerUnlessPooled) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("warden-qwen3-kind-" + std::to_string(::getpid()));
  warden::testing::run_fixture_command("warden-fixture --arch qwen3 --head reranker --seed 1 --out DIR", dir);
  ThreadPool pool(1);
  catalog::CatalogOptions o;
  o.pool = &pool;
  const catalog::CatalogModel reranker =
      catalog::make_model_spec(catalog::ModelArg{"r", dir.string(), ""}, o);
  EXPECT_EQ(reranker.spec.kind, ModelKind::Reranker);
  const auto loaded = reranker.spec.load();
  ASSERT_TRUE(loaded->classifier);
  EXPECT_EQ(loaded->classifier->labels().size(), 1U);
  EXPECT_TRUE(loaded->classifier->takes_instruction());
  o.pooling = "lasttoken";
  const catalog::CatalogModel embedder =
      catalog::make_model_spec(catalog::ModelArg{"e", dir.string(), ""}, o);
  EXPECT_EQ(embedder.spec.kind, ModelKind::Embedding);
  const auto as_embedder = embedder.spec.load();
  ASSERT_TRUE(as_embedder->embedder);
  const std::string_view text[] = {"what is the capital of France?"};
  EXPECT_EQ(as_embedder->embedder->embed(text).rows(), 1U);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden

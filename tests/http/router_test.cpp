// The routes through the Router alone (no sockets): every route's JSON, every error
// status, auth, timing headers, and the admission behaviours (429, 504, dropped).

#include "http/router.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "embed/hashing_embedder.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "support/gated_embedder.hpp"

namespace warden::http {
namespace {

using namespace std::chrono_literals;

struct Answer {
  int status = 0;
  std::string body;
  std::string content_type;
  std::map<std::string, std::string> headers;
};

std::future<Answer> send(Handler& handler, std::string method, std::string target, std::string body = {},
                         std::string authorization = {}, std::shared_ptr<Cancellation> cancel = nullptr) {
  // The request's views must live until respond: keep the strings in the closure's state.
  struct State {
    std::string method, target, body, authorization;
    std::promise<Answer> promise;
  };
  auto state = std::make_shared<State>();
  state->method = std::move(method);
  state->target = std::move(target);
  state->body = std::move(body);
  state->authorization = std::move(authorization);
  auto future = state->promise.get_future();
  Request r;
  r.method = state->method;
  r.target = state->target;
  r.content_type = "application/json";
  r.authorization = state->authorization;
  r.body = state->body;
  r.request_id = "test";
  if (!cancel) cancel = std::make_shared<Cancellation>();
  handler.handle(r, cancel, [state](Response response) {
    Answer a;
    a.status = response.status;
    a.body = std::move(response.body);
    a.content_type = response.content_type;
    for (auto& [k, v] : response.headers) a.headers[k] = v;
    state->promise.set_value(std::move(a));
  });
  return future;
}

Answer call(Handler& handler, std::string method, std::string target, std::string body = {},
            std::string authorization = {}) {
  auto f = send(handler, std::move(method), std::move(target), std::move(body), std::move(authorization));
  EXPECT_EQ(f.wait_for(10s), std::future_status::ready);
  return f.get();
}

std::string error_type(const std::string& body) {
  simdjson::dom::parser p;
  std::string_view t;
  if (p.parse(body)["error_type"].get(t) != simdjson::SUCCESS) return "<none>";
  return std::string(t);
}

class RouterTest : public ::testing::Test {
 protected:
  explicit RouterTest(ServiceOptions options = {}) : service_(embedder_, options, &metrics_) {}
  Handler& handler() { return service_.handler(); }

  embed::HashingEmbedder embedder_;
  serving::MetricsRegistry metrics_;
  Service service_;
};

TEST_F(RouterTest, HealthInfoModelsOpenapi) {
  EXPECT_EQ(call(handler(), "GET", "/health").status, 200);
  const Answer info = call(handler(), "GET", "/info");
  ASSERT_EQ(info.status, 200);
  simdjson::dom::parser p;
  const auto doc = p.parse(info.body);
  EXPECT_EQ(std::string_view(doc["model_id"]), "hashing-ngram-256");
  EXPECT_EQ(std::uint64_t(doc["dim"]), 256U);
  EXPECT_FALSE(bool(doc["semantic"]));
  EXPECT_EQ(std::uint64_t(doc["max_batch_tokens"]), 16384U);
  // TEI's shape: model_type is an object naming the kind and its pooling.
  EXPECT_EQ(std::string_view(doc["model_type"]["embedding"]["pooling"]), "hashing");
  const Answer models = call(handler(), "GET", "/v1/models");
  ASSERT_EQ(models.status, 200);
  simdjson::dom::parser p2;
  EXPECT_EQ(std::string_view(p2.parse(models.body)["data"].at(0)["id"]), "hashing-ngram-256");
  const Answer openapi = call(handler(), "GET", "/openapi.json");
  ASSERT_EQ(openapi.status, 200);
  simdjson::dom::parser p3;
  EXPECT_NO_THROW((void)p3.parse(openapi.body)["paths"]["/embed"].get_object().value());
}

TEST_F(RouterTest, EmbedReturnsUnitRowsAndTimingHeaders) {
  const Answer a = call(handler(), "POST", "/embed", R"({"inputs": ["hello world", "second"]})");
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser p;
  const auto rows = p.parse(a.body).get_array().value();
  ASSERT_EQ(rows.size(), 2U);
  double norm = 0;
  std::size_t n = 0;
  for (const auto x : rows.at(0).get_array()) {
    norm += double(x) * double(x);
    ++n;
  }
  EXPECT_EQ(n, 256U);
  EXPECT_NEAR(norm, 1.0, 1e-5);
  for (const char* h :
       {"x-compute-time", "x-compute-tokens", "x-queue-time", "x-tokenization-time", "x-inference-time",
        "x-total-time", "X-Current-Concurrency", "X-Waiting-Queue-Size"}) {
    EXPECT_TRUE(a.headers.contains(h)) << h;
  }
  // Hashing counts code points: "hello world" 11 + "second" 6.
  EXPECT_EQ(a.headers.at("x-compute-tokens"), "17");
  // Characters are code points too, not bytes.
  const Answer u = call(handler(), "POST", "/embed", R"({"inputs": "h\u00e9\u00e9"})");
  ASSERT_EQ(u.status, 200);
  EXPECT_EQ(u.headers.at("x-compute-characters"), "3");
}

TEST_F(RouterTest, EmbedDimensionsTruncatesAndRenormalises) {
  const Answer a = call(handler(), "POST", "/embed", R"({"inputs": "hello world", "dimensions": 32})");
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser p;
  const auto row = p.parse(a.body).at(0).get_array().value();
  EXPECT_EQ(row.size(), 32U);
  double norm = 0;
  for (const auto x : row) norm += double(x) * double(x);
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": "x", "dimensions": 257})").status, 422);
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": "x", "dimensions": 0})").status, 422);
}

TEST_F(RouterTest, OpenAiEmbeddingsUsageAndBase64) {
  const Answer f =
      call(handler(), "POST", "/v1/embeddings", R"({"input": ["abc"], "model": "hashing-ngram-256"})");
  ASSERT_EQ(f.status, 200) << f.body;
  simdjson::dom::parser p;
  const auto doc = p.parse(f.body);
  EXPECT_EQ(std::uint64_t(doc["usage"]["prompt_tokens"]), 3U);
  EXPECT_EQ(std::uint64_t(doc["usage"]["total_tokens"]), 3U);
  EXPECT_EQ(std::string_view(doc["model"]), "hashing-ngram-256");
  const Answer b = call(handler(), "POST", "/v1/embeddings",
                        R"({"input": "abc", "encoding_format": "base64", "dimensions": 8})");
  ASSERT_EQ(b.status, 200) << b.body;
  simdjson::dom::parser p2;
  const std::string_view encoded = p2.parse(b.body)["data"].at(0)["embedding"];
  EXPECT_EQ(encoded.size(), 44U);  // 8 floats = 32 bytes = 44 base64 characters
}

TEST_F(RouterTest, SimilarityOfATextWithItselfIsOne) {
  const Answer a =
      call(handler(), "POST", "/similarity",
           R"({"inputs": {"source_sentence": "the cat sat", "sentences": ["the cat sat", "zzz qqq"]}})");
  ASSERT_EQ(a.status, 200) << a.body;
  simdjson::dom::parser p;
  const auto scores = p.parse(a.body).get_array().value();
  ASSERT_EQ(scores.size(), 2U);
  EXPECT_NEAR(double(scores.at(0)), 1.0, 1e-5);
  EXPECT_LT(double(scores.at(1)), 0.5);
  // As /embed does (TEI's rule), an empty text is refused rather than embedded.
  const Answer empty = call(handler(), "POST", "/similarity",
                            R"({"inputs": {"source_sentence": "a", "sentences": ["b", ""]}})");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(error_type(empty.body), "Empty");
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": ["a", ""]})").status, 400);
}

TEST_F(RouterTest, ErrorsHaveTheRightStatusAndType) {
  EXPECT_EQ(call(handler(), "GET", "/nope").status, 404);
  EXPECT_EQ(call(handler(), "GET", "/embed").status, 405);
  const Answer empty = call(handler(), "POST", "/embed", R"({"inputs": []})");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(error_type(empty.body), "Empty");
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": 5})").status, 422);
  EXPECT_EQ(call(handler(), "POST", "/embed", "{not json").status, 422);
  // No tokenizer: token ids, /tokenize, /decode and /embed_all are the wrong kind of model.
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": [101, 102]})").status, 424);
  EXPECT_EQ(call(handler(), "POST", "/tokenize", R"({"inputs": "abc"})").status, 424);
  EXPECT_EQ(call(handler(), "POST", "/decode", R"({"ids": [1, 2]})").status, 424);
  EXPECT_EQ(call(handler(), "POST", "/embed_all", R"({"inputs": "abc"})").status, 424);
  // Not an embedding route for an embedding model.
  EXPECT_EQ(call(handler(), "POST", "/rerank", R"({"query": "q", "texts": ["a"]})").status, 424);
  EXPECT_EQ(call(handler(), "POST", "/predict", R"({"inputs": "a"})").status, 424);
  const Answer v1 = call(handler(), "POST", "/v1/rerank", R"({"query": "q", "documents": ["a"]})");
  EXPECT_EQ(v1.status, 424);
  simdjson::dom::parser p;
  EXPECT_NO_THROW((void)std::string_view(p.parse(v1.body)["error"]["message"]));
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": "a", "prompt_name": "query"})").status, 422);
}

TEST_F(RouterTest, MetricsCountRequestsByRouteAndStatus) {
  (void)call(handler(), "POST", "/embed", R"({"inputs": "a"})");
  (void)call(handler(), "GET", "/nope");
  const Answer m = call(handler(), "GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_TRUE(m.content_type.starts_with("text/plain"));
  EXPECT_NE(m.body.find(R"(warden_requests_total{route="/embed",status="200"} 1)"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find(R"(warden_requests_total{route="unmatched",status="404"} 1)"), std::string::npos);
  EXPECT_NE(m.body.find("warden_batch_inputs_bucket"), std::string::npos);
  EXPECT_NE(m.body.find("warden_queue_size"), std::string::npos);
}

class SmallBatchRouter : public RouterTest {
 protected:
  static ServiceOptions small() {
    ServiceOptions o;
    o.router.max_client_batch_size = 2;
    return o;
  }
  SmallBatchRouter() : RouterTest(small()) {}
};

TEST_F(SmallBatchRouter, TooManyInputsIs422) {
  const Answer a = call(handler(), "POST", "/embed", R"({"inputs": ["a", "b", "c"]})");
  EXPECT_EQ(a.status, 422);
  EXPECT_NE(a.body.find("batch size 3 > maximum allowed batch size 2"), std::string::npos) << a.body;
}

class AuthRouter : public RouterTest {
 protected:
  static ServiceOptions keyed() {
    ServiceOptions o;
    o.router.api_key = "s3cret";
    return o;
  }
  AuthRouter() : RouterTest(keyed()) {}
};

// /metrics names the served models: it needs the key too, unless --public-metrics.
TEST_F(AuthRouter, KeyIsRequiredExceptOnHealth) {
  EXPECT_EQ(call(handler(), "GET", "/health").status, 200);
  EXPECT_EQ(call(handler(), "GET", "/metrics").status, 401);
  EXPECT_EQ(call(handler(), "GET", "/metrics", {}, "Bearer s3cret").status, 200);
  const Answer unauthorized = call(handler(), "POST", "/embed", R"({"inputs": "a"})");
  EXPECT_EQ(unauthorized.status, 401);
  EXPECT_EQ(unauthorized.headers.at("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": "a"})", "Bearer wrong").status, 401);
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": "a"})", "Bearer s3cret").status, 200);
  EXPECT_EQ(call(handler(), "POST", "/embed", R"({"inputs": "a"})", "bearer s3cret").status, 200);
  const Answer v1 = call(handler(), "POST", "/v1/embeddings", R"({"input": "a"})", "Bearer s3cretx");
  EXPECT_EQ(v1.status, 401);
  EXPECT_NE(v1.body.find("invalid_api_key"), std::string::npos);
}

TEST(PublicMetrics, MetricsAnswerWithoutTheKeyAndNothingElseDoes) {
  const embed::HashingEmbedder embedder;
  ServiceOptions o;
  o.router.api_key = "s3cret";
  o.router.public_metrics = true;
  Service service(embedder, o, nullptr);
  EXPECT_EQ(call(service.handler(), "GET", "/metrics").status, 200);
  EXPECT_EQ(call(service.handler(), "GET", "/info").status, 401);
  EXPECT_EQ(call(service.handler(), "POST", "/embed", R"({"inputs": "a"})").status, 401);
}

using warden::testing::GatedEmbedder;

ServiceOptions tight(std::size_t queue, std::chrono::milliseconds timeout) {
  ServiceOptions o;
  o.scheduler.max_concurrent = 1;
  o.scheduler.max_queue = queue;
  o.scheduler.queue_timeout = timeout;
  o.router.max_client_batch_size = 1;
  return o;
}

TEST(RouterAdmission, FullQueueAnswers429AtOnceAndTheRestComplete) {
  GatedEmbedder embedder;
  serving::MetricsRegistry metrics;
  Service service(embedder, tight(1, 0ms), &metrics);
  auto first = send(service.handler(), "POST", "/embed", R"({"inputs": "a"})");
  ASSERT_TRUE(embedder.wait_entered(1));
  auto queued = send(service.handler(), "POST", "/v1/embeddings", R"({"input": "b"})");
  // Wait until the second is really queued (tokenization runs on a worker first).
  for (int i = 0; i < 500 && service.scheduler().load().waiting_jobs == 0; ++i)
    std::this_thread::sleep_for(2ms);
  const Answer refused = send(service.handler(), "POST", "/v1/embeddings", R"({"input": "c"})").get();
  EXPECT_EQ(refused.status, 429);
  EXPECT_NE(refused.body.find("rate_limit_exceeded"), std::string::npos);
  EXPECT_EQ(refused.headers.at("X-Waiting-Queue-Size"), "1");
  EXPECT_FALSE(refused.headers.contains("x-compute-time"));  // nothing was computed
  EXPECT_EQ(refused.headers.at("Retry-After"), "1");
  EXPECT_NE(metrics.render().find("warden_rejected_total 1"), std::string::npos);
  embedder.open();
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(queued.get().status, 200);
}

TEST(RouterAdmission, QueueTimeoutAnswers504WithoutComputing) {
  GatedEmbedder embedder;
  Service service(embedder, tight(10, 50ms), nullptr);
  auto first = send(service.handler(), "POST", "/embed", R"({"inputs": "a"})");
  ASSERT_TRUE(embedder.wait_entered(1));
  auto late = send(service.handler(), "POST", "/embed", R"({"inputs": "b"})");
  std::this_thread::sleep_for(150ms);
  embedder.open();
  EXPECT_EQ(first.get().status, 200);
  const Answer a = late.get();
  EXPECT_EQ(a.status, 504);
  EXPECT_EQ(error_type(a.body), "Overloaded");
  EXPECT_FALSE(a.headers.contains("x-compute-tokens"));
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(embedder.wait_entered(1));
}

TEST(RouterAdmission, DisconnectedClientsAreDroppedWithoutComputing) {
  GatedEmbedder embedder;
  serving::MetricsRegistry metrics;
  Service service(embedder, tight(10, 0ms), &metrics);
  auto first = send(service.handler(), "POST", "/embed", R"({"inputs": "a"})");
  ASSERT_TRUE(embedder.wait_entered(1));
  auto cancel = std::make_shared<Cancellation>();
  auto gone = send(service.handler(), "POST", "/embed", R"({"inputs": "b"})", {}, cancel);
  for (int i = 0; i < 500 && service.scheduler().load().waiting_jobs == 0; ++i)
    std::this_thread::sleep_for(2ms);
  cancel->cancel();
  embedder.open();
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(gone.get().status, 499);
  EXPECT_NE(metrics.render().find("warden_dropped_total 1"), std::string::npos);
}

}  // namespace
}  // namespace warden::http

// The HTTP server over a real socket on 127.0.0.1 (an ephemeral port), with the hashing
// embedder: every implemented route, every error status of this slice, and /health still
// answering after each error.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "embed/hashing_embedder.hpp"
#include "http/http_client.hpp"
#include "http/server.hpp"
#include "http/service.hpp"

namespace warden {
namespace {

using testing::HttpConnection;
using testing::HttpResponse;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http::ServerOptions options;
    options.port = 0;
    options.payload_limit = 4096;
    server_ = std::make_unique<http::Server>(options, service_.handler());
    thread_ = std::thread([this] { server_->run(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
    service_.shutdown(std::chrono::milliseconds(0));
    server_.reset();
  }

  HttpResponse get(const std::string& target) {
    return HttpConnection(server_->port()).request("GET", target);
  }
  HttpResponse post(const std::string& target, const std::string& body,
                    const std::string& content_type = "application/json") {
    return HttpConnection(server_->port()).request("POST", target, body, content_type);
  }
  void expect_healthy() { EXPECT_EQ(get("/health").status, 200); }

  // TEI's error body: {"error": "...", "error_type": "..."}.
  static void expect_tei_error(const HttpResponse& r, int status, const std::string& type) {
    EXPECT_EQ(r.status, status) << r.body;
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parser.parse(r.body);
    EXPECT_FALSE(std::string_view(doc["error"].get_string()).empty());
    EXPECT_EQ(std::string_view(doc["error_type"].get_string()), type);
  }

  embed::HashingEmbedder embedder_;
  http::Service service_{embedder_, {}, nullptr};
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

TEST_F(ServerTest, HealthAndInfo) {
  const HttpResponse health = get("/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "{}");
  EXPECT_FALSE(health.headers.at("x-request-id").empty());

  const HttpResponse info = get("/info");
  ASSERT_EQ(info.status, 200);
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(info.body);
  EXPECT_EQ(std::string_view(doc["model_id"].get_string()), "hashing-ngram-256");
  EXPECT_EQ(std::uint64_t(doc["dim"].get_uint64()), 256U);
  EXPECT_FALSE(bool(doc["semantic"].get_bool()));
}

TEST_F(ServerTest, EchoesTheClientsRequestId) {
  HttpConnection c(server_->port());
  const HttpResponse r = c.request("GET", "/health", {}, {}, "X-Request-ID: abc-123\r\n");
  EXPECT_EQ(r.headers.at("x-request-id"), "abc-123");
}

TEST_F(ServerTest, TeiEmbedMatchesTheHashingEmbedder) {
  const HttpResponse r = post("/embed", R"({"inputs": ["hello world", "second"], "truncate": true})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<std::string_view> texts = {"hello world", "second"};
  const Embeddings expected = embedder_.embed(texts);
  simdjson::dom::parser parser;
  const simdjson::dom::array rows = parser.parse(r.body).get_array();
  ASSERT_EQ(rows.size(), 2U);
  std::size_t i = 0;
  for (simdjson::dom::element row : rows) {
    const simdjson::dom::array values = row.get_array();
    ASSERT_EQ(values.size(), 256U);
    std::size_t j = 0;
    for (simdjson::dom::element v : values) {
      EXPECT_NEAR(double(v.get_double()), double(expected.row(i)[j]), 1e-6);
      ++j;
    }
    ++i;
  }
  // A single string gives one row too.
  const HttpResponse one = post("/embed", R"({"inputs": "hello world"})");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(parser.parse(one.body).get_array().size(), 1U);
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  HttpConnection c(server_->port());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.request("POST", "/embed", R"({"inputs": "x"})").status, 200);
    EXPECT_EQ(c.request("GET", "/health").status, 200);
  }
}

TEST_F(ServerTest, OpenAiEmbeddingsShape) {
  const HttpResponse r = post("/v1/embeddings", R"({"input": ["a", "b"], "model": "hashing-ngram-256"})");
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(r.body);
  EXPECT_EQ(std::string_view(doc["object"].get_string()), "list");
  EXPECT_EQ(std::string_view(doc["model"].get_string()), "hashing-ngram-256");
  const simdjson::dom::array data = doc["data"].get_array();
  ASSERT_EQ(data.size(), 2U);
  std::uint64_t index = 0;
  for (simdjson::dom::element item : data) {
    EXPECT_EQ(std::string_view(item["object"].get_string()), "embedding");
    EXPECT_EQ(std::uint64_t(item["index"].get_uint64()), index++);
    EXPECT_EQ(item["embedding"].get_array().size(), 256U);
  }
  // The hashing embedder counts code points: "a" and "b".
  EXPECT_EQ(std::uint64_t(doc["usage"]["prompt_tokens"].get_uint64()), 2U);

  // base64: 256 float32 = 1024 bytes = 1368 base64 characters.
  const HttpResponse b64 = post("/v1/embeddings", R"({"input": "a", "encoding_format": "base64"})");
  ASSERT_EQ(b64.status, 200) << b64.body;
  const simdjson::dom::element d2 = parser.parse(b64.body);
  EXPECT_EQ(std::string_view(d2["data"].at(0)["embedding"].get_string()).size(), 1368U);
}

TEST_F(ServerTest, TeiErrors) {
  expect_tei_error(post("/embed", R"({"inputs": []})"), 400, "Empty");
  expect_tei_error(post("/embed", R"({"inputs": ["a", ""]})"), 400, "Empty");
  expect_healthy();
  // Unknown fields are ignored, as TEI and OpenAI do.
  EXPECT_EQ(post("/embed", R"({"inputs": "a", "no_such_field": {"x": [1]}})").status, 200);
  expect_tei_error(post("/embed", R"({"inputs": 5})"), 422, "Validation");
  expect_healthy();
  expect_tei_error(post("/embed", R"({"inputs": "a", "normalize": "yes"})"), 422, "Validation");
  expect_tei_error(post("/embed", R"({"inputs": )"), 422, "Validation");
  expect_tei_error(post("/embed", "{\"inputs\": \"\xff\xfe\"}"), 422, "Validation");
  expect_tei_error(post("/embed", std::string(100, '[') + std::string(100, ']')), 422, "Validation");
  expect_healthy();
  expect_tei_error(post("/embed", R"({"inputs": "a"})", "text/plain"), 415, "UnsupportedMediaType");
  expect_tei_error(get("/embed"), 405, "MethodNotAllowed");
  expect_tei_error(get("/nope"), 404, "NotFound");
  // Paths no route has are unknown routes, not pretend ones.
  expect_tei_error(post("/rerank", R"({"query": "q", "texts": ["a"]})"), 424, "Backend");  // not a reranker
  expect_tei_error(post("/rerank", "{}"), 422, "Validation");  // the body is checked first
  expect_tei_error(post("/nope", "{}"), 404, "NotFound");
  expect_healthy();
  expect_tei_error(post("/embed", R"({"inputs": ")" + std::string(5000, 'a') + "\"}"), 413, "Validation");
  expect_healthy();
}

TEST_F(ServerTest, OpenAiErrorBody) {
  const HttpResponse r = post("/v1/embeddings", R"({"input": [], "model": "m"})");
  EXPECT_EQ(r.status, 400);
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(r.body);
  EXPECT_EQ(std::string_view(doc["error"]["type"].get_string()), "invalid_request_error");
  EXPECT_EQ(std::string_view(doc["error"]["param"].get_string()), "input");
  EXPECT_TRUE(doc["error"]["code"].is_null());
  EXPECT_FALSE(std::string_view(doc["error"]["message"].get_string()).empty());
  const HttpResponse bad = post("/v1/embeddings", R"({"input": "a", "encoding_format": "int8"})");
  EXPECT_EQ(bad.status, 422);
  expect_healthy();
}

// JSON travels as UTF-8 (RFC 8259 §8.1): a body declared in another charset is refused
// rather than read as UTF-8.
TEST_F(ServerTest, JsonInACharsetOtherThanUtf8Is415) {
  const std::string body = R"({"inputs": "hi"})";
  for (const char* type : {"application/json; charset=utf-8", "application/json;charset=UTF-8",
                           "Application/JSON; charset=\"utf-8\"", "application/json; foo=bar"}) {
    EXPECT_EQ(post("/embed", body, type).status, 200) << type;
  }
  for (const char* type : {"application/json; charset=latin1", "application/json; charset=utf-16",
                           "application/json;charset=iso-8859-1; foo=bar", "text/plain"}) {
    expect_tei_error(post("/embed", body, type), 415, "UnsupportedMediaType");
  }
  expect_healthy();
}

// HEAD on a GET route: the GET answer's status and headers, no body.
TEST_F(ServerTest, HeadOnGetRoutes) {
  HttpConnection c(server_->port());
  for (const char* target : {"/health", "/info", "/v1/models", "/openapi.json"}) {
    const HttpResponse get_answer = HttpConnection(server_->port()).request("GET", target);
    c.send_raw(std::string("HEAD ") + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    const HttpResponse r = c.read_response(/*head=*/true);
    EXPECT_EQ(r.status, 200) << target;
    EXPECT_EQ(r.headers.at("content-length"), std::to_string(get_answer.body.size())) << target;
  }
  EXPECT_EQ(c.request("GET", "/health").body, "{}");  // nothing stray on the connection
  c.send_raw("HEAD /embed HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response(/*head=*/true).status, 405);
}

// GET /docs: the Swagger UI over /openapi.json, from swagger-ui-dist's own files.
TEST_F(ServerTest, DocsServesTheSwaggerUi) {
  HttpConnection c(server_->port());
  const HttpResponse redirect = c.request("GET", "/docs");
#ifdef WARDEN_SWAGGER_UI
  EXPECT_EQ(redirect.status, 308);
  EXPECT_EQ(redirect.headers.at("location"), "/docs/");
  const HttpResponse page = c.request("GET", "/docs/");
  ASSERT_EQ(page.status, 200);
  EXPECT_TRUE(page.headers.at("content-type").starts_with("text/html"));
  for (const char* asset : {"swagger-ui.css", "index.css", "swagger-ui-bundle.js",
                            "swagger-ui-standalone-preset.js", "swagger-initializer.js"}) {
    EXPECT_NE(page.body.find(asset), std::string::npos) << asset;
    const HttpResponse r = c.request("GET", std::string("/docs/") + asset);
    EXPECT_EQ(r.status, 200) << asset;
    EXPECT_GT(r.body.size(), 100U) << asset;
  }
  const HttpResponse init = c.request("GET", "/docs/swagger-initializer.js");
  EXPECT_NE(init.body.find("\"/openapi.json\""), std::string::npos) << init.body;
  EXPECT_EQ(init.body.find("petstore"), std::string::npos) << init.body;
  EXPECT_GT(c.request("GET", "/docs/swagger-ui-bundle.js").body.size(), 1'000'000U);
  EXPECT_EQ(c.request("GET", "/docs/../openapi.json").status, 404);
  EXPECT_EQ(c.request("GET", "/docs/nothing.js").status, 404);
#else
  // A build without the package's files says how to get them.
  EXPECT_EQ(redirect.status, 404);
  EXPECT_NE(redirect.body.find("scripts/fetch-swagger-ui"), std::string::npos) << redirect.body;
#endif
}

TEST_F(ServerTest, StopEndsIdleKeepAliveConnections) {
  // An idle keep-alive connection must not hold shutdown up: TearDown joins the server.
  HttpConnection idle(server_->port());
  EXPECT_EQ(idle.request("GET", "/health").status, 200);
}

}  // namespace
}  // namespace warden

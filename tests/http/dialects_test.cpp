// The dialects beside TEI's own routes, as the SDKs written for other servers call them:
// TEI's POST / and /invocations (the model's own kind), OpenAI's /embeddings and
// /v1/models/{id}, Cohere's /v1/embed and /v2/embed (embedding types), the documents rerank
// family (/v1/rerank, /v2/rerank, /v1/reranking), and OpenAI-shaped errors on every
// OpenAI-style path. (tests/clients/ runs the real npm SDKs against a real server.)

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "http/base64.hpp"
#include "http/embedding_types.hpp"
#include "http/service.hpp"
#include "support/classifier_goldens.hpp"
#include "support/handler_client.hpp"

namespace warden::http {
namespace {

using warden::testing::call_handler;
using warden::testing::HandlerAnswer;

std::vector<float> floats_of(simdjson::dom::element list) {
  std::vector<float> out;
  for (const auto x : list.get_array()) out.push_back(static_cast<float>(double(x)));
  return out;
}

class EmbeddingDialects : public ::testing::Test {
 protected:
  HandlerAnswer post(const std::string& target, const std::string& body) {
    return call_handler(service_.handler(), "POST", target, body);
  }
  // The hashing embedder's own (unit) vector for a text.
  std::vector<float> reference(const std::string& text) {
    const std::vector<std::string_view> texts = {text};
    const Embeddings e = embedder_.embed(texts);
    return {e.row(0).begin(), e.row(0).end()};
  }

  embed::HashingEmbedder embedder_;
  Service service_{embedder_, {}, nullptr};
};

TEST_F(EmbeddingDialects, RootAndInvocationsEmbedAsTeiDoes) {
  const HandlerAnswer embed = post("/embed", R"({"inputs": ["hello", "world"]})");
  for (const char* target : {"/", "/invocations"}) {
    const HandlerAnswer r = post(target, R"({"inputs": ["hello", "world"]})");
    ASSERT_EQ(r.status, 200) << target << r.body;
    EXPECT_EQ(r.body, embed.body) << target;
  }
  EXPECT_EQ(call_handler(service_.handler(), "GET", "/").status, 405);
  const HandlerAnswer bad = post("/", R"({"nope": 1})");
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_NE(bad.body.find(R"("error_type")"), std::string::npos) << bad.body;  // TEI's error body
}

TEST_F(EmbeddingDialects, OpenAiWithoutTheV1Prefix) {
  const HandlerAnswer with =
      post("/v1/embeddings", R"({"input": "hello", "model": "text-embedding-3-small"})");
  const HandlerAnswer without =
      post("/embeddings", R"({"input": "hello", "model": "text-embedding-3-small"})");
  ASSERT_EQ(without.status, 200) << without.body;
  EXPECT_EQ(without.body, with.body);
  const HandlerAnswer error = post("/embeddings", R"({"input": ""})");
  EXPECT_EQ(error.status, 422);
  EXPECT_NE(error.body.find(R"("type":"invalid_request_error")"), std::string::npos) << error.body;
}

TEST_F(EmbeddingDialects, OpenAiModelByIdAndOpenAiErrorsOnEveryOpenAiPath) {
  const HandlerAnswer model = call_handler(service_.handler(), "GET", "/v1/models/hashing-ngram-256");
  ASSERT_EQ(model.status, 200) << model.body;
  simdjson::dom::parser p;
  const auto doc = p.parse(model.body);
  EXPECT_EQ(std::string_view(doc["id"]), "hashing-ngram-256");
  EXPECT_EQ(std::string_view(doc["object"]), "model");
  const HandlerAnswer missing = call_handler(service_.handler(), "GET", "/v1/models/gpt-4o");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find(R"("code":"model_not_found")"), std::string::npos) << missing.body;
  for (const char* path : {"/v1/nothing", "/v2/nothing", "/v1/chat/completions"}) {
    const HandlerAnswer r = post(path, "{}");
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_NE(r.body.find(R"("type":"invalid_request_error")"), std::string::npos) << path << r.body;
  }
  EXPECT_NE(post("/nothing", "{}").body.find(R"("error_type":"NotFound")"), std::string::npos);
}

TEST_F(EmbeddingDialects, CohereV1FloatsAndV2ByType) {
  const std::vector<float> hello = reference("hello");
  HandlerAnswer r = post("/v1/embed", R"({"texts": ["hello", "world"], "model": "embed-english-v3.0",
                                          "input_type": "search_document"})");
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(r.body);
  EXPECT_EQ(std::string_view(doc["response_type"]), "embeddings_floats");
  EXPECT_EQ(floats_of(doc["embeddings"].at(0)), hello);
  EXPECT_EQ(std::string_view(doc["texts"].at(1)), "world");
  EXPECT_FALSE(std::string_view(doc["id"]).empty());
  EXPECT_EQ(std::string_view(doc["meta"]["api_version"]["version"]), "1");
  EXPECT_GT(std::uint64_t(doc["meta"]["billed_units"]["input_tokens"]), 0U);

  r = post("/v2/embed", R"({"texts": ["hello"], "model": "embed-v4.0", "input_type": "search_query",
                             "embedding_types": ["float", "int8", "uint8", "binary", "ubinary", "base64"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser p2;
  doc = p2.parse(r.body);
  EXPECT_EQ(std::string_view(doc["response_type"]), "embeddings_by_type");
  EXPECT_EQ(std::string_view(doc["meta"]["api_version"]["version"]), "2");
  const simdjson::dom::element by = doc["embeddings"];
  EXPECT_EQ(floats_of(by["float"].at(0)), hello);
  for (const EmbeddingType t :
       {EmbeddingType::Int8, EmbeddingType::Uint8, EmbeddingType::Binary, EmbeddingType::Ubinary}) {
    std::vector<std::int64_t> got;
    for (const auto x : by[embedding_type_name(t)].at(0).get_array()) got.push_back(std::int64_t(x));
    const std::vector<std::int32_t> want = quantize(hello, t);
    ASSERT_EQ(got.size(), want.size()) << embedding_type_name(t);
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << embedding_type_name(t) << i;
  }
  EXPECT_EQ(std::string_view(by["base64"].at(0)), base64_floats(hello));

  // v1 with embedding_types answers by type too; output_dimension shortens and renormalises.
  r = post("/v1/embed", R"({"texts": ["hello"], "embedding_types": ["int8"], "output_dimension": 64})");
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser p3;
  doc = p3.parse(r.body);
  EXPECT_EQ(doc["embeddings"]["int8"].at(0).get_array().size(), 64U);
  EXPECT_EQ(doc["embeddings"]["float"].error(), simdjson::NO_SUCH_FIELD);
}

TEST_F(EmbeddingDialects, CohereEmbedErrors) {
  EXPECT_EQ(post("/v2/embed", R"({"texts": []})").status, 400);
  EXPECT_EQ(post("/v2/embed", R"({"texts": ["a", ""]})").status, 400);
  EXPECT_EQ(post("/v2/embed", R"({"texts": ["a"], "embedding_types": ["float32"]})").status, 422);
  EXPECT_EQ(post("/v2/embed", R"({"texts": ["a"], "truncate": "MIDDLE"})").status, 422);
  EXPECT_EQ(post("/v2/embed", R"({"texts": ["a"], "output_dimension": 4096})").status, 422);
  const HandlerAnswer images = post("/v2/embed", R"({"images": ["data:image/png;base64,AAAA"]})");
  EXPECT_EQ(images.status, 422);
  EXPECT_NE(images.body.find("images are not supported"), std::string::npos) << images.body;
}

TEST(EmbeddingTypes, QuantisationAsDocumented) {
  const std::vector<float> v = {0.5F, -0.25F, 0.0F, 0.125F, -0.5F, 0.01F, 0.2F, -0.1F, 0.3F};
  EXPECT_EQ(quantize(v, EmbeddingType::Int8),
            (std::vector<std::int32_t>{127, -64, 0, 32, -127, 3, 51, -25, 76}));
  EXPECT_EQ(quantize(v, EmbeddingType::Uint8),
            (std::vector<std::int32_t>{255, 64, 128, 160, 1, 131, 179, 103, 204}));
  // Bits of v > 0, first dimension highest: 1 0 0 1 0 1 1 0 | 1 (padded with zeros).
  EXPECT_EQ(quantize(v, EmbeddingType::Ubinary), (std::vector<std::int32_t>{0b10010110, 0b10000000}));
  EXPECT_EQ(quantize(v, EmbeddingType::Binary), (std::vector<std::int32_t>{0b10010110 - 128, 0}));
  EXPECT_EQ(quantize(std::vector<float>(3, 0.0F), EmbeddingType::Int8), (std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_EQ(parse_embedding_type("ubinary"), EmbeddingType::Ubinary);
  EXPECT_FALSE(parse_embedding_type("int4").has_value());
}

class RerankDialects : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = warden::testing::make_classifier_fixture("bert-reranker"); }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  HandlerAnswer post(const std::string& target, const std::string& body) {
    return call_handler(service_.handler(), "POST", target, body);
  }

  static std::filesystem::path dir_;
  ThreadPool pool_{2};
  classify::NeuralClassifier classifier_{dir_, &pool_};
  Service service_{ServedModel{nullptr, &classifier_}, {}, nullptr};
};

std::filesystem::path RerankDialects::dir_;

TEST_F(RerankDialects, EveryDocumentsDialectAnswersTheSameScores) {
  const std::string query = R"("query": "what is a cat")";
  const HandlerAnswer tei =
      post("/rerank", "{" + query + R"(, "texts": ["x", "a cat is an animal", "dogs"]})");
  ASSERT_EQ(tei.status, 200) << tei.body;
  simdjson::dom::parser p0;
  const simdjson::dom::array want = p0.parse(tei.body).get_array();
  for (const auto& [target, body] : std::vector<std::pair<std::string, std::string>>{
           {"/v1/rerank", "{" + query + R"(, "documents": ["x", {"text": "a cat is an animal"}, "dogs"]})"},
           {"/v2/rerank",
            "{" + query + R"(, "documents": ["x", "a cat is an animal", "dogs"], "model": "rerank-v3.5"})"},
           {"/v1/reranking", "{" + query + R"(, "input": ["x", "a cat is an animal", "dogs"]})"}}) {
    SCOPED_TRACE(target);
    const HandlerAnswer r = post(target, body);
    ASSERT_EQ(r.status, 200) << r.body;
    simdjson::dom::parser p;
    const simdjson::dom::element doc = p.parse(r.body);
    EXPECT_FALSE(std::string_view(doc["id"]).empty());
    EXPECT_EQ(std::string_view(doc["meta"]["api_version"]["version"]), target == "/v2/rerank" ? "2" : "1");
    EXPECT_EQ(std::uint64_t(doc["meta"]["billed_units"]["search_units"]), 1U);
    const std::uint64_t total = doc["usage"]["total_tokens"];
    EXPECT_GT(total, 0U);
    EXPECT_EQ(std::uint64_t(doc["usage"]["prompt_tokens"]), total);
    EXPECT_EQ(std::uint64_t(doc["usage"]["completion_tokens"]), 0U);
    const simdjson::dom::array results = doc["results"].get_array();
    ASSERT_EQ(results.size(), want.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(std::uint64_t(results.at(i)["index"]), std::uint64_t(want.at(i)["index"]));
      EXPECT_EQ(double(results.at(i)["relevance_score"]), double(want.at(i)["score"]));
      EXPECT_EQ(results.at(i)["document"].error(), simdjson::NO_SUCH_FIELD);  // not asked for
    }
    // The same list under `data`.
    EXPECT_EQ(simdjson::to_string(doc["data"]), simdjson::to_string(doc["results"]));
  }
  // top_k cuts like top_n; documents come back when asked.
  const HandlerAnswer r = post("/v1/reranking", "{" + query +
                                                    R"(, "input": ["x", "a cat is an animal"], "top_k": 1,
                                                    "return_documents": true})");
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser p;
  const simdjson::dom::array results = p.parse(r.body)["results"].get_array();
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(std::string_view(results.at(0)["document"]["text"]),
            std::uint64_t(results.at(0)["index"]) == 0 ? "x" : "a cat is an animal");
}

// Mixedbread's SDK reads data[i].score, and with return_input each item as it sent it.
TEST_F(RerankDialects, MixedbreadFieldsAndItsInputEchoedAsSent) {
  const HandlerAnswer r = post("/v1/reranking", R"({"query": "what is a cat", "return_input": true,
      "input": ["x", {"text": "a cat is an animal", "id": 7}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser p;
  const simdjson::dom::element doc = p.parse(r.body);
  EXPECT_EQ(std::string_view(doc["object"]), "list");
  EXPECT_EQ(std::uint64_t(doc["top_k"]), 2U);
  EXPECT_TRUE(bool(doc["return_input"]));
  for (const simdjson::dom::element item : doc["data"].get_array()) {
    EXPECT_EQ(double(item["score"]), double(item["relevance_score"]));
    EXPECT_EQ(std::string_view(item["object"]), "rank_result");
    EXPECT_EQ(simdjson::to_string(item["input"]),
              std::uint64_t(item["index"]) == 0 ? R"("x")" : R"({"text":"a cat is an animal","id":7})");
  }
  const HandlerAnswer plain = post("/v1/reranking", R"({"query": "q", "input": ["x"]})");
  EXPECT_EQ(p.parse(plain.body)["data"].at(0)["input"].error(), simdjson::NO_SUCH_FIELD);
}

TEST_F(RerankDialects, RootRerankOrPredictsByTheBody) {
  const std::string pair = R"({"query": "what is a cat", "texts": ["a cat is an animal"]})";
  EXPECT_EQ(post("/", pair).body, post("/rerank", pair).body);
  const std::string inputs = R"({"inputs": ["what is a cat", "a cat is an animal"]})";
  EXPECT_EQ(post("/invocations", inputs).body, post("/predict", inputs).body);
}

}  // namespace
}  // namespace warden::http

// Reranking by token vectors: /rerank and the documents dialects on a PyLate ColBERT score by
// MaxSim (the query encoded as a query, each text as a document), on a bge-m3-shaped model by
// FlagEmbedding's weighted sum of its dense, sparse and ColBERT scores; /embed_hybrid's
// input_type picks the ColBERT encoding; the scores are recomputed here from the embedder's
// own outputs, naively, to check the route's arithmetic.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "http/service.hpp"
#include "support/golden_fixture.hpp"
#include "support/handler_client.hpp"

namespace warden::http {
namespace {

namespace fs = std::filesystem;

warden::testing::HandlerAnswer post(Handler& handler, const std::string& target, const std::string& body) {
  return warden::testing::call_handler(handler, "POST", target, body);
}

const std::vector<std::string> kDocs = {"BGE M3 is an embedding model.", "BM25 is a bag-of-words function!",
                                        "the lazy dog", "a"};
const std::string kQuery = "what is BGE M3?";
const char* kBody = R"("query": "what is BGE M3?", "texts": ["BGE M3 is an embedding model.",)"
                    R"( "BM25 is a bag-of-words function!", "the lazy dog", "a"])";

class VectorRerank : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    colbert_ = fs::temp_directory_path() / ("warden-vrerank-colbert-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch bert --head none --preset tiny --seed 1 --colbert --out DIR", colbert_);
    m3_ = fs::temp_directory_path() / ("warden-vrerank-m3-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch xlm-roberta --head none --preset tiny --seed 1 --m3-heads --out DIR", m3_);
  }
  static void TearDownTestSuite() {
    fs::remove_all(colbert_);
    fs::remove_all(m3_);
  }
  static ServiceOptions options() {
    ServiceOptions o;
    o.workers = 2;
    o.scheduler.max_batch_tokens = 64;  // the query and its texts split over batches
    return o;
  }
  // The embedder's outputs for the query (as a query) and kDocs (as documents).
  static std::vector<embed::RetrievalVectors> outputs(const embed::NeuralEmbedder& e) {
    std::vector<embed::PreparedInput> prepared;
    embed::InputOptions q;
    q.query = true;
    prepared.push_back(e.prepare(kQuery, q));
    for (const auto& d : kDocs) prepared.push_back(e.prepare(d, {}));
    std::vector<const embed::PreparedInput*> ptrs;
    for (const auto& p : prepared) ptrs.push_back(&p);
    return e.embed_retrieval(ptrs);
  }
  static double dot(std::span<const float> a, std::span<const float> b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
    return s;
  }
  static double maxsim(const Embeddings& q, const Embeddings& d) {
    double total = 0;
    for (std::size_t i = 0; i < q.rows(); ++i) {
      double best = -1e30;
      for (std::size_t j = 0; j < d.rows(); ++j) best = std::max(best, dot(q.row(i), d.row(j)));
      total += best;
    }
    return total;
  }
  static double lexical(const SparseVector& a, const SparseVector& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      for (std::size_t j = 0; j < b.size(); ++j) {
        if (a.indices[i] == b.indices[j]) s += double(a.values[i]) * double(b.values[j]);
      }
    }
    return s;
  }
  // index -> score from TEI's /rerank answer.
  static std::vector<double> tei_scores(const std::string& body, std::size_t n) {
    std::vector<double> scores(n, NAN);
    simdjson::dom::parser p;
    double previous = 1e30;
    for (const auto r : p.parse(body).get_array()) {
      const double s = double(r["score"]);
      EXPECT_LE(s, previous);  // descending
      previous = s;
      scores.at(std::uint64_t(r["index"])) = s;
    }
    return scores;
  }

  static fs::path colbert_;
  static fs::path m3_;
  ThreadPool pool_{2};
};

fs::path VectorRerank::colbert_;
fs::path VectorRerank::m3_;

TEST_F(VectorRerank, AColbertRerankScoresByMaxSimOfQueryAndDocumentVectors) {
  const embed::NeuralEmbedder embedder(colbert_, &pool_);
  Service service(embedder, options(), nullptr);
  const auto a = post(service.handler(), "/rerank", std::string("{") + kBody + "}");
  ASSERT_EQ(a.status, 200) << a.body;
  const auto out = outputs(embedder);
  ASSERT_EQ(out[0].multi.rows(), 32U);  // the expanded query
  const auto scores = tei_scores(a.body, kDocs.size());
  for (std::size_t i = 0; i < kDocs.size(); ++i) {
    EXPECT_NEAR(scores[i], maxsim(out[0].multi, out[i + 1].multi), 1e-4) << i;
  }
  // A sum over 32 query vectors: no sigmoid squeezes it into (0, 1).
  EXPECT_GT(*std::max_element(scores.begin(), scores.end()), 1.0);

  // Cohere's dialect: the same scores as relevance_score, top_n of them.
  const auto c =
      post(service.handler(), "/v1/rerank",
           R"({"query": "what is BGE M3?", "top_n": 2, "documents": ["BGE M3 is an embedding model.",)"
           R"( "BM25 is a bag-of-words function!", "the lazy dog", "a"]})");
  ASSERT_EQ(c.status, 200) << c.body;
  simdjson::dom::parser p;
  const auto results = p.parse(c.body)["results"].get_array().value();
  ASSERT_EQ(results.size(), 2U);
  for (const auto r : results) {
    EXPECT_NEAR(double(r["relevance_score"]), scores[std::uint64_t(r["index"])], 1e-5);
  }
}

TEST_F(VectorRerank, EmbedHybridEncodesQueriesAndDocumentsAsTheInputTypeSays) {
  const embed::NeuralEmbedder embedder(colbert_, &pool_);
  Service service(embedder, options(), nullptr);
  const auto out = outputs(embedder);
  for (const bool query : {true, false}) {
    const std::string body = std::string(R"({"inputs": [")") + (query ? kQuery : kDocs[1]) +
                             R"("], "input_type": ")" + (query ? "query" : "document") + R"("})";
    const auto a = post(service.handler(), "/embed_hybrid", body);
    ASSERT_EQ(a.status, 200) << a.body;
    simdjson::dom::parser p;
    const simdjson::dom::array outer = p.parse(a.body);
    ASSERT_EQ(outer.size(), 1U);
    const simdjson::dom::array rows = (*outer.begin())["multi"];
    const Embeddings& want = query ? out[0].multi : out[2].multi;
    ASSERT_EQ(rows.size(), want.rows());
    std::size_t r = 0;
    for (const auto row : rows) {
      std::size_t d = 0;
      for (const auto x : row.get_array()) EXPECT_NEAR(double(x), want.row(r)[d++], 1e-6);
      ++r;
    }
  }
  // The document dropped its punctuation ("-" and "!"): fewer vectors than tokens.
  EXPECT_LT(out[2].multi.rows(), embedder.prepare(kDocs[1], {}).ids.size());
  EXPECT_EQ(post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "input_type": "passage"})").status,
            422);
  // No dense vector: /embed points at the routes that answer.
  const auto dense = post(service.handler(), "/embed", R"({"inputs": "a"})");
  EXPECT_EQ(dense.status, 424);
  EXPECT_NE(dense.body.find("/embed_hybrid"), std::string::npos) << dense.body;
}

TEST_F(VectorRerank, Bge3RerankIsFlagEmbeddingsWeightedSumOfItsThreeScores) {
  const embed::NeuralEmbedder embedder(m3_, &pool_);
  Service service(embedder, options(), nullptr);
  const auto out = outputs(embedder);
  auto dense = [&](std::size_t i) {
    return dot(out[0].dense, out[i].dense) /
           std::sqrt(dot(out[0].dense, out[0].dense) * dot(out[i].dense, out[i].dense));
  };
  for (const auto& [weights, w] :
       {std::pair{std::string(), std::vector<double>{1, 1, 1}},
        std::pair{std::string(R"(, "retrieval_weights": [0.4, 0.2, 0.4])"),
                  std::vector<double>{0.4, 0.2, 0.4}},
        std::pair{std::string(R"(, "retrieval_weights": [0, 0, 1])"), std::vector<double>{0, 0, 1}}}) {
    const auto a = post(service.handler(), "/rerank", std::string("{") + kBody + weights + "}");
    ASSERT_EQ(a.status, 200) << a.body;
    const auto scores = tei_scores(a.body, kDocs.size());
    for (std::size_t i = 0; i < kDocs.size(); ++i) {
      const double colbert = maxsim(out[0].multi, out[i + 1].multi) / double(out[0].multi.rows());
      const double want =
          (w[0] * dense(i + 1) + w[1] * lexical(out[0].sparse, out[i + 1].sparse) + w[2] * colbert) /
          (w[0] + w[1] + w[2]);
      EXPECT_NEAR(scores[i], want, 1e-4) << weights << " " << i;
    }
  }
  for (const char* bad : {R"([1, 1])", R"([0, 0, 0])", R"([-1, 1, 1])", R"("dense")"}) {
    const auto a = post(service.handler(), "/rerank",
                        std::string("{") + kBody + R"(, "retrieval_weights": )" + bad + "}");
    EXPECT_EQ(a.status, 422) << bad << " " << a.body;
  }
}

TEST_F(VectorRerank, WeightsForAnOutputTheModelLacksAre424) {
  const embed::NeuralEmbedder embedder(colbert_, &pool_);
  Service service(embedder, options(), nullptr);
  const auto a =
      post(service.handler(), "/rerank", std::string("{") + kBody + R"(, "retrieval_weights": [1, 0, 1]})");
  EXPECT_EQ(a.status, 424) << a.body;
  EXPECT_NE(a.body.find("gives multi"), std::string::npos) << a.body;
}

}  // namespace
}  // namespace warden::http

// The retrieval routes on a bge-m3-shaped fixture (XLM-R with sparse_linear.pt and
// colbert_linear.pt): TEI's /embed_sparse in TEI's answer shape, /embed_hybrid's subsets from
// one pass (each equal to what the model gives alone, cached as one entry), and the 424 that
// names what a model without the heads can give.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "http/server.hpp"
#include "http/service.hpp"
#include "support/golden_fixture.hpp"
#include "support/handler_client.hpp"

namespace warden::http {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The router's answer to a POST, with its x-cache header ("" when there is none).
struct Answer {
  int status = 0;
  std::string body;
  std::string cache;
};

Answer post(Handler& handler, const std::string& target, const std::string& body) {
  const warden::testing::HandlerAnswer a = warden::testing::call_handler(handler, "POST", target, body);
  const auto cache = a.headers.find("x-cache");
  return {a.status, a.body, cache == a.headers.end() ? "" : cache->second};
}

class RetrievalRoutes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("warden-retrieval-routes-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch xlm-roberta --head none --preset tiny --seed 1 --m3-heads --out DIR", dir_);
    plain_ = fs::temp_directory_path() / ("warden-retrieval-plain-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch xlm-roberta --head none --preset tiny --seed 1 --out DIR", plain_);
    splade_ = fs::temp_directory_path() / ("warden-retrieval-splade-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch bert --head none --preset tiny --seed 1 --splade --out DIR", splade_);
  }
  static void TearDownTestSuite() {
    fs::remove_all(dir_);
    fs::remove_all(plain_);
    fs::remove_all(splade_);
  }
  static ServiceOptions options(std::size_t cache_bytes = 0) {
    ServiceOptions o;
    o.workers = 2;
    o.scheduler.max_batch_tokens = 64;  // small batches: requests are split and merged
    o.cache.max_bytes = cache_bytes;
    return o;
  }

  static fs::path dir_;
  static fs::path plain_;
  static fs::path splade_;
  ThreadPool pool_{2};
};

fs::path RetrievalRoutes::dir_;
fs::path RetrievalRoutes::plain_;
fs::path RetrievalRoutes::splade_;

// The sparse answer of one input as (index, value) pairs.
std::vector<std::pair<std::uint64_t, double>> sparse_of(simdjson::dom::element list) {
  std::vector<std::pair<std::uint64_t, double>> out;
  for (const auto e : list.get_array()) out.emplace_back(std::uint64_t(e["index"]), double(e["value"]));
  return out;
}

const char* kTexts = R"(["what is BGE M3?", "Definition of BM25, a bag-of-words retrieval function", "a"])";

TEST_F(RetrievalRoutes, EmbedSparseAnswersTeisShapeWithTheModelsWeights) {
  const embed::NeuralEmbedder embedder(dir_, &pool_);
  Service service(embedder, options(), nullptr);
  const Answer a = post(service.handler(), "/embed_sparse", std::string(R"({"inputs": )") + kTexts + "}");
  ASSERT_EQ(a.status, 200) << a.body;

  std::vector<embed::PreparedInput> prepared;
  for (const char* t : {"what is BGE M3?", "Definition of BM25, a bag-of-words retrieval function", "a"})
    prepared.push_back(embedder.prepare(t, {}));
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : prepared) ptrs.push_back(&p);
  const auto want = embedder.embed_retrieval(ptrs);

  simdjson::dom::parser p;
  const auto outer = p.parse(a.body).get_array().value();
  ASSERT_EQ(outer.size(), 3U);
  std::size_t i = 0;
  for (const auto input : outer) {
    std::size_t k = 0;
    std::int64_t previous = -1;
    for (const auto entry : input.get_array()) {
      ASSERT_LT(k, want[i].sparse.size());
      const auto index = std::int64_t(entry["index"]);
      EXPECT_GT(index, previous);  // ascending, each id once
      previous = index;
      EXPECT_EQ(std::uint64_t(index), want[i].sparse.indices[k]);
      EXPECT_NEAR(double(entry["value"]), want[i].sparse.values[k], 1e-6);
      EXPECT_GT(double(entry["value"]), 0.0);
      ++k;
    }
    EXPECT_EQ(k, want[i].sparse.size());
    ++i;
  }
}

TEST_F(RetrievalRoutes, EmbedHybridGivesEachSubsetAsTheModelComputesIt) {
  const embed::NeuralEmbedder embedder(dir_, &pool_);
  Service service(embedder, options(), nullptr);
  const std::string inputs = std::string(R"("inputs": )") + kTexts;
  const Answer all = post(service.handler(), "/embed_hybrid", "{" + inputs + "}");
  ASSERT_EQ(all.status, 200) << all.body;
  simdjson::dom::parser p;
  const auto results = p.parse(all.body).get_array().value();
  ASSERT_EQ(results.size(), 3U);
  for (const auto r : results) {
    // Absent `outputs`: every output the model has.
    EXPECT_TRUE(r["dense"].is_array());
    EXPECT_TRUE(r["sparse"].is_array());
    EXPECT_TRUE(r["multi"].is_array());
  }
  // The dense output is /embed's vector (normalised), bit for bit.
  const Answer dense = post(service.handler(), "/embed_hybrid", "{" + inputs + R"(, "outputs": ["dense"]})");
  const Answer embed = post(service.handler(), "/embed", "{" + inputs + "}");
  ASSERT_EQ(dense.status, 200) << dense.body;
  simdjson::dom::parser p2, p3;
  const auto d = p2.parse(dense.body).get_array().value();
  const auto e = p3.parse(embed.body).get_array().value();
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(d.at(i)["sparse"].error() == simdjson::SUCCESS);
    EXPECT_EQ(simdjson::to_string(d.at(i)["dense"].value()), simdjson::to_string(e.at(i).value()));
  }
  // Multi-vector: one unit row per token but the first, as wide as the head.
  const Answer multi =
      post(service.handler(), "/embed_hybrid", R"({"inputs": "a b c", "outputs": ["multi"]})");
  ASSERT_EQ(multi.status, 200) << multi.body;
  simdjson::dom::parser p4;
  const auto rows = p4.parse(multi.body).at(0)["multi"].get_array().value();
  EXPECT_EQ(rows.size(), embedder.prepare("a b c", {}).ids.size() - 1);
  for (const auto row : rows) {
    double norm = 0;
    std::size_t width = 0;
    for (const auto x : row.get_array()) {
      norm += double(x) * double(x);
      ++width;
    }
    EXPECT_EQ(width, embedder.multi_vector_dim());
    EXPECT_NEAR(norm, 1.0, 1e-5);
  }
  // dimensions and normalize apply to the dense output.
  const Answer shortened =
      post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "outputs": ["dense"], "dimensions": 8})");
  ASSERT_EQ(shortened.status, 200) << shortened.body;
  simdjson::dom::parser p5;
  EXPECT_EQ(p5.parse(shortened.body).at(0)["dense"].get_array().size(), 8U);
}

TEST_F(RetrievalRoutes, BadOutputListsAreValidationErrors) {
  const embed::NeuralEmbedder embedder(dir_, &pool_);
  Service service(embedder, options(), nullptr);
  EXPECT_EQ(post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "outputs": ["colour"]})").status,
            422);
  EXPECT_EQ(
      post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "outputs": ["dense", "dense"]})").status,
      422);
  EXPECT_EQ(post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "outputs": "dense"})").status, 422);
  EXPECT_EQ(post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "outputs": []})").status, 400);
  EXPECT_EQ(post(service.handler(), "/embed_sparse", R"({"inputs": ""})").status, 400);
  EXPECT_EQ(post(service.handler(), "/embed_sparse", R"({"inputs": [1, 99999999]})").status, 422);
}

TEST_F(RetrievalRoutes, AModelWithoutTheHeadsIs424NamingWhatItGives) {
  const embed::NeuralEmbedder embedder(plain_, &pool_);
  Service service(embedder, options(), nullptr);
  for (const auto& [route, body] :
       {std::pair{"/embed_sparse", R"({"inputs": "a"})"},
        std::pair{"/embed_hybrid", R"({"inputs": "a", "outputs": ["dense", "multi"]})"}}) {
    const Answer a = post(service.handler(), route, body);
    EXPECT_EQ(a.status, 424) << route << " " << a.body;
    EXPECT_NE(a.body.find("it gives dense"), std::string::npos) << a.body;
  }
  // What it has, it gives.
  EXPECT_EQ(post(service.handler(), "/embed_hybrid", R"({"inputs": "a"})").status, 200);
}

TEST_F(RetrievalRoutes, OneCacheEntryServesEverySubset) {
  const embed::NeuralEmbedder embedder(dir_, &pool_);
  Service service(embedder, options(64 << 20), nullptr);
  const Answer first = post(service.handler(), "/embed_hybrid", R"({"inputs": "cached text"})");
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.cache, "miss");
  const Answer sparse = post(service.handler(), "/embed_sparse", R"({"inputs": "cached text"})");
  ASSERT_EQ(sparse.status, 200);
  EXPECT_EQ(sparse.cache, "hit");
  const Answer again = post(service.handler(), "/embed_hybrid", R"({"inputs": "cached text"})");
  EXPECT_EQ(again.cache, "hit");
  EXPECT_EQ(again.body, first.body);
  simdjson::dom::parser p, q;
  EXPECT_EQ(simdjson::to_string(p.parse(first.body).at(0)["sparse"].value()),
            simdjson::to_string(q.parse(sparse.body).at(0).value()));
}

TEST_F(RetrievalRoutes, ASpladeModelAnswersSparseAndRefusesDenseRoutes) {
  const embed::NeuralEmbedder embedder(splade_, &pool_);
  Service service(embedder, options(), nullptr);
  const Answer sparse = post(service.handler(), "/embed_sparse", R"({"inputs": ["the quick brown fox"]})");
  ASSERT_EQ(sparse.status, 200) << sparse.body;
  simdjson::dom::parser p;
  const auto all = sparse_of(p.parse(sparse.body).at(0).value());
  EXPECT_GT(all.size(), 10U);
  for (const char* route : {"/embed", "/v1/embeddings"}) {
    const std::string body = std::string(route) == "/embed" ? R"({"inputs": "a"})" : R"({"input": "a"})";
    const Answer a = post(service.handler(), route, body);
    EXPECT_EQ(a.status, 424) << route << " " << a.body;
    EXPECT_NE(a.body.find("/embed_sparse"), std::string::npos) << a.body;
  }
  // /embed_hybrid gives what the model has: the sparse vector alone.
  const Answer hybrid = post(service.handler(), "/embed_hybrid", R"({"inputs": ["the quick brown fox"]})");
  ASSERT_EQ(hybrid.status, 200) << hybrid.body;
  simdjson::dom::parser q;
  const auto h = q.parse(hybrid.body).at(0).value();
  EXPECT_FALSE(h["dense"].error() == simdjson::SUCCESS);
  EXPECT_EQ(sparse_of(h["sparse"].value()), all);
  EXPECT_EQ(post(service.handler(), "/embed_hybrid", R"({"inputs": "a", "outputs": ["dense"]})").status, 424);
}

TEST_F(RetrievalRoutes, TopKAndThresholdPruneTheSparseVector) {
  const embed::NeuralEmbedder embedder(splade_, &pool_);
  Service service(embedder, options(), nullptr);
  const std::string text = R"("inputs": ["the quick brown fox jumps over the lazy dog"])";
  simdjson::dom::parser p0, p1, p2;
  const auto all =
      sparse_of(p0.parse(post(service.handler(), "/embed_sparse", "{" + text + "}").body).at(0).value());
  ASSERT_GT(all.size(), 8U);
  // top_k: the k largest, still in id order.
  const Answer top = post(service.handler(), "/embed_sparse", "{" + text + R"(, "top_k": 5})");
  ASSERT_EQ(top.status, 200) << top.body;
  const auto kept = sparse_of(p1.parse(top.body).at(0).value());
  ASSERT_EQ(kept.size(), 5U);
  std::vector<double> values;
  for (const auto& [i, v] : all) values.push_back(v);
  std::sort(values.rbegin(), values.rend());
  for (std::size_t k = 0; k < kept.size(); ++k) {
    EXPECT_GE(kept[k].second, values[4]);
    if (k > 0) {
      EXPECT_LT(kept[k - 1].first, kept[k].first);
    }
  }
  // threshold: the weights from it up.
  const std::string cut_text = std::to_string(values[values.size() / 2]);
  const auto cut = static_cast<float>(std::stod(cut_text));  // what the server reads
  const Answer over =
      post(service.handler(), "/embed_sparse", "{" + text + R"(, "threshold": )" + cut_text + "}");
  ASSERT_EQ(over.status, 200) << over.body;
  const auto above = sparse_of(p2.parse(over.body).at(0).value());
  std::size_t want = 0;
  for (const auto& [i, v] : all) want += static_cast<float>(v) >= cut ? 1 : 0;
  EXPECT_EQ(above.size(), want);
  EXPECT_EQ(post(service.handler(), "/embed_sparse", "{" + text + R"(, "top_k": 0})").status, 422);
  EXPECT_EQ(post(service.handler(), "/embed_sparse", "{" + text + R"(, "threshold": -1})").status, 422);
  EXPECT_EQ(post(service.handler(), "/embed_sparse", "{" + text + R"(, "threshold": "x"})").status, 422);
}

}  // namespace
}  // namespace warden::http

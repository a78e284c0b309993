// The retrieval routes on a bge-m3-shaped fixture (XLM-R with sparse_linear.pt and
// colbert_linear.pt): TEI's /embed_sparse in TEI's answer shape, /embed_hybrid's subsets from
// one pass (each equal to what the model gives alone, cached as one entry), and the 424 that
// names what a model without the heads can give.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

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

namespace warden::http {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Answer {
  int status = 0;
  std::string body;
  std::string cache;  // the x-cache header, when there is one
};

Answer post(Handler& handler, const std::string& target, const std::string& body) {
  auto promise = std::make_shared<std::promise<Answer>>();
  auto future = promise->get_future();
  auto kept = std::make_shared<std::pair<std::string, std::string>>(target, body);
  Request r;
  r.method = "POST";
  r.target = kept->first;
  r.content_type = "application/json";
  r.body = kept->second;
  handler.handle(r, std::make_shared<Cancellation>(), [promise, kept](Response response) {
    std::string cache;
    for (const auto& [name, value] : response.headers) {
      if (name == "x-cache") cache = value;
    }
    promise->set_value({response.status, std::move(response.body), cache});
  });
  EXPECT_EQ(future.wait_for(20s), std::future_status::ready);
  return future.get();
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
  }
  static void TearDownTestSuite() {
    fs::remove_all(dir_);
    fs::remove_all(plain_);
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
  ThreadPool pool_{2};
};

fs::path RetrievalRoutes::dir_;
fs::path RetrievalRoutes::plain_;

const char* kTexts = R"(["what is BGE M3?", "Definition of BM25, a bag-of-words retrieval function", "a"])";

TEST_F(RetrievalRoutes, EmbedSparseAnswersTeisShapeWithTheModelsWeights) {
  const NeuralEmbedder embedder(dir_, &pool_);
  Service service(embedder, options(), nullptr);
  const Answer a = post(service.handler(), "/embed_sparse", std::string(R"({"inputs": )") + kTexts + "}");
  ASSERT_EQ(a.status, 200) << a.body;

  std::vector<PreparedInput> prepared;
  for (const char* t : {"what is BGE M3?", "Definition of BM25, a bag-of-words retrieval function", "a"})
    prepared.push_back(embedder.prepare(t, {}));
  std::vector<const PreparedInput*> ptrs;
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
  const NeuralEmbedder embedder(dir_, &pool_);
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
  const NeuralEmbedder embedder(dir_, &pool_);
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
  const NeuralEmbedder embedder(plain_, &pool_);
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
  const NeuralEmbedder embedder(dir_, &pool_);
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

}  // namespace
}  // namespace warden::http

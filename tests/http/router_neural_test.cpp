// The routes on a real (fixture) BERT folder: what only a model with a tokenizer can do —
// token-id inputs, /tokenize, /decode, /embed_all, truncation options, usage counts — and
// that a vector does not depend on the batch the scheduler put it in.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "http/http_client.hpp"
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
};

std::future<Answer> send(Handler& handler, const std::string& target, std::string body) {
  struct State {
    std::string target, body;
    std::promise<Answer> promise;
  };
  auto state = std::make_shared<State>();
  state->target = target;
  state->body = std::move(body);
  auto future = state->promise.get_future();
  Request r;
  r.method = "POST";
  r.target = state->target;
  r.content_type = "application/json";
  r.body = state->body;
  handler.handle(r, std::make_shared<Cancellation>(), [state](Response response) {
    state->promise.set_value({response.status, std::move(response.body)});
  });
  return future;
}

Answer post(Handler& handler, const std::string& target, std::string body) {
  auto f = send(handler, target, std::move(body));
  EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
  return f.get();
}

std::vector<std::vector<double>> rows_of(const std::string& body) {
  simdjson::dom::parser p;
  std::vector<std::vector<double>> rows;
  for (const auto row : p.parse(body).get_array()) {
    rows.emplace_back();
    for (const auto x : row.get_array()) rows.back().push_back(double(x));
  }
  return rows;
}

class NeuralRouter : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("warden-router-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch bert --head none --preset tiny --seed 1 --pooling mean --out DIR", dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  NeuralRouter() : embedder_(dir_, &pool_), service_(embedder_, options(), nullptr) {}
  static ServiceOptions options() {
    ServiceOptions o;
    o.workers = 2;
    o.scheduler.max_batch_tokens = 64;  // small batches, so requests get split and merged
    return o;
  }
  Handler& handler() { return service_.handler(); }

  static fs::path dir_;
  ThreadPool pool_{2};
  embed::NeuralEmbedder embedder_;
  Service service_;
};

fs::path NeuralRouter::dir_;

TEST_F(NeuralRouter, TokenIdsGiveTheSameVectorAsTheirText) {
  const Answer tok = post(handler(), "/tokenize", R"({"inputs": "hello world"})");
  ASSERT_EQ(tok.status, 200) << tok.body;
  simdjson::dom::parser p;
  std::string ids = "[";
  for (const auto t : p.parse(tok.body).at(0).get_array()) {
    if (ids.size() > 1) ids += ",";
    ids += std::to_string(std::uint64_t(t["id"]));
  }
  ids += "]";
  const Answer by_text = post(handler(), "/embed", R"({"inputs": "hello world"})");
  const Answer by_ids = post(handler(), "/embed", R"({"inputs": )" + ids + "}");
  ASSERT_EQ(by_text.status, 200) << by_text.body;
  ASSERT_EQ(by_ids.status, 200) << by_ids.body;
  EXPECT_EQ(by_text.body, by_ids.body);
  EXPECT_EQ(post(handler(), "/embed", R"({"inputs": [999999999]})").status, 422);
}

TEST_F(NeuralRouter, TokenizeOffsetsAndDecodeRoundTrip) {
  const Answer tok =
      post(handler(), "/tokenize", R"({"inputs": ["hello world"], "add_special_tokens": true})");
  ASSERT_EQ(tok.status, 200) << tok.body;
  simdjson::dom::parser p;
  const auto tokens = p.parse(tok.body).at(0).get_array().value();
  ASSERT_GE(tokens.size(), 3U);
  EXPECT_TRUE(bool(tokens.at(0)["special"]));  // [CLS]
  EXPECT_TRUE(tokens.at(0)["start"].is_null());
  EXPECT_EQ(std::string_view(tokens.at(0)["text"]), "[CLS]");
  // A normal token shows the slice of the input it covers, as TEI does.
  EXPECT_EQ(std::string_view(tokens.at(1)["text"]), "hello");
  const std::string text = "hello world";
  std::string ids = "[";
  for (const auto t : tokens) {
    if (ids.size() > 1) ids += ",";
    ids += std::to_string(std::uint64_t(t["id"]));
    if (!bool(t["special"])) {
      const auto start = std::uint64_t(t["start"]);
      const auto stop = std::uint64_t(t["stop"]);
      EXPECT_LT(start, stop);
      EXPECT_LE(stop, text.size());
    }
  }
  ids += "]";
  const Answer dec = post(handler(), "/decode", R"({"ids": )" + ids + "}");
  ASSERT_EQ(dec.status, 200) << dec.body;
  simdjson::dom::parser p2;
  EXPECT_EQ(std::string_view(p2.parse(dec.body).at(0)), "hello world");
}

TEST_F(NeuralRouter, EmbedAllMeanIsThePooledVector) {
  const Answer all = post(handler(), "/embed_all", R"({"inputs": "a small test"})");
  ASSERT_EQ(all.status, 200) << all.body;
  simdjson::dom::parser p;
  const auto tokens = p.parse(all.body).at(0).get_array().value();
  std::vector<double> mean;
  for (const auto t : tokens) {
    std::size_t k = 0;
    for (const auto x : t.get_array()) {
      if (mean.size() <= k) mean.push_back(0);
      mean[k++] += double(x);
    }
  }
  for (double& m : mean) m /= static_cast<double>(tokens.size());
  const Answer pooled = post(handler(), "/embed", R"({"inputs": "a small test", "normalize": false})");
  ASSERT_EQ(pooled.status, 200);
  const auto rows = rows_of(pooled.body);
  ASSERT_EQ(rows[0].size(), mean.size());
  for (std::size_t k = 0; k < mean.size(); ++k) EXPECT_NEAR(rows[0][k], mean[k], 1e-4);
}

TEST_F(NeuralRouter, TruncationOptions) {
  std::string long_text;
  for (int i = 0; i < 2000; ++i) long_text += "word ";
  const std::string input = R"({"inputs": ")" + long_text + R"(")";
  EXPECT_EQ(post(handler(), "/embed", input + "}").status, 200);  // auto-truncate
  const Answer refused = post(handler(), "/embed", input + R"(, "truncate": false})");
  EXPECT_EQ(refused.status, 422);
  EXPECT_NE(refused.body.find("tokens"), std::string::npos) << refused.body;
  const Answer left =
      post(handler(), "/embed",
           R"({"inputs": "alpha )" + long_text + R"(omega", "truncation_direction": "Left"})");
  const Answer right = post(handler(), "/embed", R"({"inputs": "alpha )" + long_text + R"(omega"})");
  ASSERT_EQ(left.status, 200);
  ASSERT_EQ(right.status, 200);
  EXPECT_NE(left.body, right.body);
}

TEST_F(NeuralRouter, UsageCountsTokensWithSpecialTokens) {
  const Answer a = post(handler(), "/v1/embeddings", R"({"input": ["hello world"]})");
  ASSERT_EQ(a.status, 200) << a.body;
  const Answer tok = post(handler(), "/tokenize", R"({"inputs": "hello world"})");
  simdjson::dom::parser p;
  const std::size_t n = p.parse(tok.body).at(0).get_array().size();
  simdjson::dom::parser p2;
  EXPECT_EQ(std::uint64_t(p2.parse(a.body)["usage"]["prompt_tokens"]), n);
}

TEST_F(NeuralRouter, ConcurrentRequestsGetTheirOwnVectorsWhateverTheBatch) {
  const std::vector<std::string> texts = {"one", "two words", "three little words",
                                          "a somewhat longer input text here"};
  std::vector<std::string> alone;
  for (const auto& t : texts)
    alone.push_back(post(handler(), "/embed", R"({"inputs": ")" + t + R"("})").body);
  std::vector<std::future<Answer>> futures;
  for (int round = 0; round < 8; ++round) {
    for (const auto& t : texts) futures.push_back(send(handler(), "/embed", R"({"inputs": ")" + t + R"("})"));
  }
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const Answer a = futures[i].get();
    ASSERT_EQ(a.status, 200);
    const auto got = rows_of(a.body)[0];
    const auto want = rows_of(alone[i % texts.size()])[0];
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-5);
  }
}

// The same over a real socket: an input past the model's token limit with truncation off
// is a 422, and the server keeps serving.
TEST_F(NeuralRouter, OverLongInputWithTruncationOffIs422OverTheSocket) {
  ServerOptions options;
  options.port = 0;
  Server server(options, handler());
  std::thread io([&server] { server.run(); });
  std::string long_text;
  for (int i = 0; i < 2000; ++i) long_text += "word ";
  const auto r = warden::testing::HttpConnection(server.port())
                     .request("POST", "/embed", R"({"inputs": ")" + long_text + R"(", "truncate": false})");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("Validation"), std::string::npos);
  EXPECT_EQ(warden::testing::HttpConnection(server.port()).request("GET", "/health").status, 200);
  server.stop();
  io.join();
}

}  // namespace
}  // namespace warden::http

// Task adapters through the routes, on a jina-embeddings-v3 fixture: `task` (jina's API word)
// names a prompt as prompt_name does and selects its adapter with it; OpenAI's and Cohere's
// input_type reach the same task; tasks whose prompts are equal (empty) still differ, in the
// result cache too; a task the model does not have is 422 naming the field.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
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

Answer post(Handler& handler, const std::string& target, const std::string& body) {
  auto promise = std::make_shared<std::promise<Answer>>();
  auto future = promise->get_future();
  auto request = std::make_shared<Request>();
  request->method = "POST";
  request->target = target;
  request->content_type = "application/json";
  request->body = body;
  handler.handle(*request, std::make_shared<Cancellation>(), [promise, request](Response response) {
    promise->set_value({response.status, std::move(response.body)});
  });
  EXPECT_EQ(future.wait_for(20s), std::future_status::ready);
  return future.get();
}

// The first vector of a TEI /embed answer, an OpenAI /v1/embeddings one or a Cohere v2 one.
std::vector<double> first_vector(const std::string& body) {
  simdjson::dom::parser p;
  const simdjson::dom::element root = p.parse(body);
  simdjson::dom::element row;
  if (root.is_array()) {
    row = root.at(0);
  } else if (root["data"].error() == simdjson::SUCCESS) {
    row = root["data"].at(0)["embedding"];
  } else {
    row = root["embeddings"]["float"].at(0);
  }
  std::vector<double> v;
  for (const auto x : row.get_array()) v.push_back(double(x));
  return v;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 1e9;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

class TaskRouter : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("warden-task-router-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch jina-v3 --head none --preset tiny --seed 1 --pooling mean --out DIR", dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  TaskRouter() : embedder_(dir_, &pool_), service_(embedder_, options(), nullptr) {}
  static ServiceOptions options() {
    ServiceOptions o;
    o.workers = 2;
    o.cache.max_bytes = 1 << 20;  // a cache that must keep tasks apart
    return o;
  }
  Handler& handler() { return service_.handler(); }
  std::vector<double> embed(const std::string& extra) {
    const Answer a = post(handler(), "/embed", R"({"inputs": "where is the station")" + extra + "}");
    EXPECT_EQ(a.status, 200) << a.body;
    return a.status == 200 ? first_vector(a.body) : std::vector<double>{};
  }

  static fs::path dir_;
  ThreadPool pool_{2};
  embed::NeuralEmbedder embedder_;
  Service service_;
};

fs::path TaskRouter::dir_;

TEST_F(TaskRouter, TaskAndPromptNameAreOneChoice) {
  const auto base = embed("");
  const auto by_task = embed(R"(, "task": "retrieval.query")");
  const auto by_prompt = embed(R"(, "prompt_name": "retrieval.query")");
  EXPECT_EQ(by_task, by_prompt);
  EXPECT_GT(max_diff(base, by_task), 1e-3);
  EXPECT_EQ(embed(R"(, "task": "retrieval.query", "prompt_name": "retrieval.query")"), by_task);
  const Answer both =
      post(handler(), "/embed", R"({"inputs": "x", "task": "retrieval.query", "prompt_name": "separation"})");
  EXPECT_EQ(both.status, 422) << both.body;
  const Answer unknown = post(handler(), "/embed", R"({"inputs": "x", "task": "summarization"})");
  EXPECT_EQ(unknown.status, 422) << unknown.body;
  EXPECT_NE(unknown.body.find("task"), std::string::npos) << unknown.body;
}

TEST_F(TaskRouter, TasksWithEqualPromptsStillDifferAlsoFromTheCache) {
  // separation, classification and text-matching all prepend nothing: only the adapter differs.
  for (int round = 0; round < 2; ++round) {  // the second round answers from the cache
    const auto sep = embed(R"(, "task": "separation")");
    const auto cls = embed(R"(, "task": "classification")");
    const auto match = embed(R"(, "task": "text-matching")");
    EXPECT_GT(max_diff(sep, cls), 1e-3) << round;
    EXPECT_GT(max_diff(cls, match), 1e-3) << round;
  }
}

TEST_F(TaskRouter, InputTypesOfOpenAiAndCohereReachTheTask) {
  const auto query = embed(R"(, "task": "retrieval.query")");
  const auto passage = embed(R"(, "task": "retrieval.passage")");
  const Answer oa =
      post(handler(), "/v1/embeddings", R"({"input": "where is the station", "input_type": "query"})");
  ASSERT_EQ(oa.status, 200) << oa.body;
  EXPECT_LE(max_diff(first_vector(oa.body), query), 1e-6);
  const Answer ot =
      post(handler(), "/v1/embeddings", R"({"input": "where is the station", "task": "retrieval.passage"})");
  ASSERT_EQ(ot.status, 200) << ot.body;
  EXPECT_LE(max_diff(first_vector(ot.body), passage), 1e-6);
  const Answer co = post(handler(), "/v2/embed",
                         R"({"texts": ["where is the station"], "input_type": "search_document",
                             "embedding_types": ["float"]})");
  ASSERT_EQ(co.status, 200) << co.body;
  EXPECT_LE(max_diff(first_vector(co.body), passage), 1e-6);
  const Answer op = post(handler(), "/v1/embeddings",
                         R"({"input": "where is the station", "prompt_name": "retrieval.query"})");
  ASSERT_EQ(op.status, 200) << op.body;
  EXPECT_LE(max_diff(first_vector(op.body), query), 1e-6);
  EXPECT_EQ(
      post(handler(), "/v1/embeddings", R"({"input": "x", "task": "separation", "input_type": "query"})")
          .status,
      422);
}

}  // namespace
}  // namespace warden::http

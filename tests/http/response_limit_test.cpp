// The answer a request may cause is bounded (--max-response-floats): /embed_all's tokens x
// dim values are counted as the inputs are tokenized and refused with 413 before anything
// is computed, over a real socket with the server's resident memory checked afterwards;
// inputs served from the result cache count too; /embed's inputs x dim likewise.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "http/http_client.hpp"
#include "http/server.hpp"
#include "http/service.hpp"
#include "support/golden_fixture.hpp"
#include "support/handler_client.hpp"
#include "support/resident_memory.hpp"

namespace warden::http {
namespace {

namespace fs = std::filesystem;
using warden::testing::call_handler;
using warden::testing::HttpConnection;
using warden::testing::resident_bytes;

// `n` texts of about `words` words each, as a JSON array.
std::string texts_json(std::size_t n, std::size_t words) {
  static const char* const kWords[] = {"the",  "quick", "brown", "fox",  "jumps",
                                       "over", "lazy",  "dog",   "again"};
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) {
    out += i == 0 ? "\"" : ",\"";
    for (std::size_t w = 0; w < words; ++w) {
      if (w != 0) out += ' ';
      out += kWords[(i + w * 7) % 9];
    }
    out += '"';
  }
  return out + "]";
}

class ResponseLimit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("warden-response-limit-" + std::to_string(::getpid()));
    warden::testing::run_fixture_command(
        "warden-fixture --arch bert --head none --preset bge-small --seed 1 --out DIR", dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static fs::path dir_;
  ThreadPool pool_{2};
};

fs::path ResponseLimit::dir_;

// 1,000 texts of 60 words to /embed_all on a 384-wide model would be some 23 million values
// (the bug this guards against turned 417 KB into a 705 MB answer): 413 at once.
TEST_F(ResponseLimit, EmbedAllOverTheLimitIs413BeforeComputingOverARealSocket) {
  const embed::NeuralEmbedder embedder(dir_, &pool_);
  Service service(embedder, {}, nullptr);
  ServerOptions options;
  options.port = 0;
  Server server(options, service.handler());
  std::thread thread([&server] { server.run(); });

  const std::string body = R"({"inputs": )" + texts_json(1000, 60) + "}";
  ASSERT_GT(body.size(), 300'000U);
  const std::size_t before = resident_bytes();
  const auto started = std::chrono::steady_clock::now();
  const auto r = HttpConnection(server.port(), 60).request("POST", "/embed_all", body);
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("--max-response-floats"), std::string::npos) << r.body.substr(0, 300);
  EXPECT_EQ(r.headers.count("x-inference-time"), 0U);  // nothing was computed
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_LT(resident_bytes(), before + (64U << 20));

  // Within the limit it answers as before.
  const auto small =
      HttpConnection(server.port(), 60).request("POST", "/embed_all", R"({"inputs": ["a b c"]})");
  EXPECT_EQ(small.status, 200) << small.body.substr(0, 300);
  server.stop();
  thread.join();
  service.shutdown(std::chrono::milliseconds(0));
}

TEST_F(ResponseLimit, CachedInputsAndPooledAnswersCountToo) {
  const embed::NeuralEmbedder embedder(dir_, &pool_);
  ServiceOptions o;
  o.router.max_response_floats = 384 * 20;  // 20 pooled vectors, or 20 token vectors
  o.cache.max_bytes = 16U << 20;
  Service service(embedder, o, nullptr);
  // Five tokens with [CLS] and [SEP]: three inputs fit, five do not.
  const std::string one = R"("the quick brown")";
  auto repeated = [&](int n) {
    std::string list = "[";
    for (int i = 0; i < n; ++i) list += (i ? "," : "") + one;
    return list + "]";
  };
  EXPECT_EQ(
      call_handler(service.handler(), "POST", "/embed_all", R"({"inputs": )" + repeated(3) + "}").status,
      200);
  // Every input is now in the cache (none is tokenized again): still refused.
  const auto cached =
      call_handler(service.handler(), "POST", "/embed_all", R"({"inputs": )" + repeated(5) + "}");
  EXPECT_EQ(cached.status, 413) << cached.body;
  EXPECT_EQ(call_handler(service.handler(), "POST", "/embed", R"({"inputs": )" + repeated(20) + "}").status,
            200);
  EXPECT_EQ(call_handler(service.handler(), "POST", "/embed", R"({"inputs": )" + repeated(21) + "}").status,
            413);
  const auto openai =
      call_handler(service.handler(), "POST", "/v1/embeddings", R"({"input": )" + repeated(21) + "}");
  EXPECT_EQ(openai.status, 413);
  EXPECT_NE(openai.body.find("invalid_request_error"), std::string::npos) << openai.body;
  // `dimensions` shortens the answer, and the count with it.
  EXPECT_EQ(call_handler(service.handler(), "POST", "/embed",
                         R"({"dimensions": 64, "inputs": )" + repeated(100) + "}")
                .status,
            200);
  service.shutdown(std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace warden::http

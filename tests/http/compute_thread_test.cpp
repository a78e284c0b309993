// Compute runs off the I/O thread: while a model request is blocked inside the embedder,
// /health still answers; and stop() lets that in-flight request finish with a 200.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "embed/hashing_embedder.hpp"
#include "http/http_client.hpp"
#include "http/server.hpp"
#include "http/service.hpp"
#include "support/gated_embedder.hpp"

namespace warden {
namespace {

using warden::testing::GatedEmbedder;

TEST(ComputeThread, HealthAnswersWhileComputeIsBusyAndStopFinishesInFlightWork) {
  GatedEmbedder embedder;
  http::Service service(embedder, {}, nullptr);
  http::ServerOptions options;
  options.port = 0;
  http::Server server(options, service.handler());
  std::thread io([&server] { server.run(); });
  const std::uint16_t port = server.port();

  auto in_flight = std::async(std::launch::async, [port] {
    return testing::HttpConnection(port).request("POST", "/embed", R"({"inputs": "hi"})").status;
  });
  ASSERT_TRUE(embedder.wait_entered());
  EXPECT_EQ(testing::HttpConnection(port).request("GET", "/health").status, 200);

  server.stop();  // while the request is still inside the embedder
  embedder.open();
  EXPECT_EQ(in_flight.get(), 200);
  io.join();
  service.shutdown(std::chrono::milliseconds(0));
}

// Admission over a real socket: with one input admitted and one request allowed to wait,
// a third request is refused with 429 at once, a waiting one past --queue-timeout-ms gets
// 504 without being computed, and the server answers /health throughout.
TEST(ComputeThread, OverloadAnswers429And504OverTheSocket) {
  GatedEmbedder embedder;
  http::ServiceOptions service_options;
  service_options.scheduler.max_concurrent = 1;
  service_options.scheduler.max_queue = 1;
  service_options.scheduler.queue_timeout = std::chrono::milliseconds(100);
  service_options.router.max_client_batch_size = 1;
  http::Service service(embedder, service_options, nullptr);
  http::ServerOptions options;
  options.port = 0;
  http::Server server(options, service.handler());
  std::thread io([&server] { server.run(); });
  const std::uint16_t port = server.port();

  auto first = std::async(std::launch::async, [port] {
    return testing::HttpConnection(port).request("POST", "/embed", R"({"inputs": "a"})").status;
  });
  ASSERT_TRUE(embedder.wait_entered());
  auto waiting = std::async(std::launch::async, [port] {
    return testing::HttpConnection(port).request("POST", "/embed", R"({"inputs": "b"})");
  });
  for (int i = 0; i < 500 && service.scheduler().load().waiting_jobs == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto refused = testing::HttpConnection(port).request("POST", "/v1/embeddings", R"({"input": "c"})");
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.headers.at("x-waiting-queue-size"), "1");
  EXPECT_EQ(testing::HttpConnection(port).request("GET", "/health").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  embedder.open();
  EXPECT_EQ(first.get(), 200);
  const auto late = waiting.get();
  EXPECT_EQ(late.status, 504) << late.body;
  EXPECT_NE(late.body.find("Overloaded"), std::string::npos);
  EXPECT_EQ(testing::HttpConnection(port).request("GET", "/health").status, 200);
  server.stop();
  io.join();
  service.shutdown(std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace warden

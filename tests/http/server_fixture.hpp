#pragma once
// A real http::Server on an ephemeral port with a small Handler of its own (no router), for
// the socket-layer tests (server_robustness_test.cpp, server_hostile_test.cpp).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/handler.hpp"
#include "http/http_client.hpp"
#include "http/server.hpp"

namespace warden::testing {

using namespace std::chrono_literals;

// Routes: /health answers at once; /echo answers its body; /big answers 32 MiB; /slow
// answers from another thread after 100 ms; /hold keeps the request until the test answers.
class TestHandler final : public http::Handler {
 public:
  struct Held {
    http::Respond respond;
    std::shared_ptr<const Cancellation> cancelled;
  };
  struct ErrorCall {
    std::string target;
    int status;
  };

  ~TestHandler() override { join_workers(); }

  void handle(const http::Request& request, std::shared_ptr<const Cancellation> cancelled,
              http::Respond respond) override {
    if (request.target == "/health") return respond(http::json_response(200, "{}"));
    if (request.target == "/echo") return respond(http::json_response(200, std::string(request.body)));
    if (request.target == "/big") return respond(http::json_response(200, std::string(32 << 20, 'x')));
    const std::lock_guard lock(mutex_);
    if (request.target == "/slow") {
      workers_.emplace_back([respond = std::move(respond)] {
        std::this_thread::sleep_for(100ms);
        respond(http::json_response(200, "slow"));
      });
      return;
    }
    if (request.target == "/hold") {
      held_.push_back({std::move(respond), std::move(cancelled)});
      changed_.notify_all();
      return;
    }
    respond(http::json_response(404, R"({"error":"not found","error_type":"NotFound"})"));
  }

  [[nodiscard]] http::Response error(std::string_view target, int status, std::string_view error_type,
                                     std::string_view message) const override {
    {
      const std::lock_guard lock(mutex_);
      errors_.push_back({std::string(target), status});
    }
    std::string escaped;
    for (const char c : message) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    return http::json_response(
        status, R"({"error":")" + escaped + R"(","error_type":")" + std::string(error_type) + R"("})");
  }

  // Waits (bounded) until `count` requests are held.
  bool wait_held(std::size_t count, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return held_.size() >= count; });
  }
  Held held(std::size_t i) {
    const std::lock_guard lock(mutex_);
    return held_.at(i);
  }
  std::vector<ErrorCall> errors() const {
    const std::lock_guard lock(mutex_);
    return errors_;
  }
  void join_workers() {
    std::vector<std::thread> workers;
    {
      const std::lock_guard lock(mutex_);
      workers.swap(workers_);
    }
    for (auto& t : workers) t.join();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Held> held_;
  mutable std::vector<ErrorCall> errors_;
  std::vector<std::thread> workers_;
};

inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class ServerFixture : public ::testing::Test {
 protected:
  void start(http::ServerOptions options = {}) {
    options.port = 0;
    server_ = std::make_unique<http::Server>(options, handler_);
    thread_ = std::thread([this] { server_->run(); });
  }
  // stop() and wait for run() to return.
  void stop_and_join() {
    server_->stop();
    thread_.join();
    server_.reset();
  }
  void TearDown() override {
    if (server_) stop_and_join();
    handler_.join_workers();
  }

  std::uint16_t port() const { return server_->port(); }
  void expect_healthy() {
    const HttpResponse r = HttpConnection(port()).request("GET", "/health");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "{}");
  }

  // The handler's error body ({"error": "...", "error_type": "..."}), and the connection
  // closing after it.
  static void expect_error_and_close(HttpConnection& c, int status, const std::string& type) {
    const HttpResponse r = c.read_response();
    EXPECT_EQ(r.status, status) << r.body;
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parser.parse(r.body);
    EXPECT_FALSE(std::string_view(doc["error"].get_string()).empty());
    EXPECT_EQ(std::string_view(doc["error_type"].get_string()), type);
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    EXPECT_EQ(r.headers.at("connection"), "close");
    EXPECT_FALSE(r.headers.at("x-request-id").empty());
    EXPECT_TRUE(c.closed_within(3s));
  }

  std::string last_error_target() const {
    const auto errors = handler_.errors();
    return errors.empty() ? std::string("(none)") : errors.back().target;
  }

  TestHandler handler_;  // before server_: it must outlive the server
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
};

}  // namespace warden::testing

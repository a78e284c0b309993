// The socket layer over a real socket, with a small Handler of its own (no router): the
// answers to malformed HTTP, the limits, the timeouts, pipelining, client disconnects,
// several I/O threads, running out of descriptors, 10,000 idle keep-alive connections and
// graceful shutdown. Every test that leaves the server running ends by checking /health.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/handler.hpp"
#include "http/http_client.hpp"
#include "http/server.hpp"
#include "http/server_fixture.hpp"

namespace warden {
namespace {

using namespace std::chrono_literals;
using testing::HttpConnection;
using testing::HttpResponse;

class ServerRobustnessTest : public testing::ServerFixture {};
using testing::eventually;
using testing::TestHandler;

TEST_F(ServerRobustnessTest, MalformedRequestLineGets400) {
  start();
  {
    HttpConnection c(port());
    c.send_raw("GARBAGE\r\n\r\n");
    expect_error_and_close(c, 400, "Validation");
    EXPECT_EQ(last_error_target(), "/");
  }
  {
    // The request line's target still chooses the API's error format.
    HttpConnection c(port());
    c.send_raw("GET /v1/embeddings HTTP/9.9\r\nHost: x\r\n\r\n");
    expect_error_and_close(c, 400, "Validation");
    EXPECT_EQ(last_error_target(), "/v1/embeddings");
  }
  expect_healthy();
}

TEST_F(ServerRobustnessTest, MalformedHeaderGets400) {
  start();
  HttpConnection c(port());
  c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n");
  expect_error_and_close(c, 400, "Validation");
  EXPECT_EQ(last_error_target(), "/health");
  expect_healthy();
}

TEST_F(ServerRobustnessTest, MalformedChunkGets400) {
  start();
  HttpConnection c(port());
  c.send_raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "zz\r\nabc\r\n0\r\n\r\n");
  expect_error_and_close(c, 400, "Validation");
  EXPECT_EQ(last_error_target(), "/echo");
  expect_healthy();
}

TEST_F(ServerRobustnessTest, HeadersOverTheLimitGet431) {
  start();  // the default limit, 16 KiB
  {
    HttpConnection c(port());
    c.send_raw("GET /v1/embeddings HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20'000, 'a') + "\r\n\r\n");
    expect_error_and_close(c, 431, "Validation");
    EXPECT_EQ(last_error_target(), "/v1/embeddings");
  }
  {
    // Just under the limit is fine, on a connection that stays open.
    HttpConnection c(port());
    const std::string big = "X-Big: " + std::string(15'000, 'a') + "\r\n";
    EXPECT_EQ(c.request("GET", "/health", {}, {}, big).status, 200);
    EXPECT_EQ(c.request("GET", "/health").status, 200);
  }
  expect_healthy();
}

TEST_F(ServerRobustnessTest, BodyOverThePayloadLimitGets413) {
  http::ServerOptions options;
  options.payload_limit = 1024;
  start(options);
  HttpConnection c(port());
  c.send_raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n" +
      std::string(5000, 'a'));
  expect_error_and_close(c, 413, "Validation");
  EXPECT_EQ(last_error_target(), "/echo");
  expect_healthy();
}

TEST_F(ServerRobustnessTest, SlowLorisIsCutOffAfterTheRequestTimeout) {
  http::ServerOptions options;
  options.request_timeout = 500ms;
  options.idle_timeout = 10s;  // not the one that applies once a request has started
  start(options);
  HttpConnection c(port());
  const auto started = std::chrono::steady_clock::now();
  bool closed = !c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  while (!closed && std::chrono::steady_clock::now() - started < 10s) {
    // One header byte every 100 ms: always some progress, never a whole request.
    closed = !c.send_raw("a") || c.closed_within(100ms);
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(closed);
  EXPECT_GE(elapsed, 400ms);
  EXPECT_LT(elapsed, 3s);
  expect_healthy();
}

TEST_F(ServerRobustnessTest, IdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  http::ServerOptions options;
  options.idle_timeout = 300ms;
  options.request_timeout = 10s;
  start(options);
  HttpConnection c(port());
  ASSERT_EQ(c.request("GET", "/health").status, 200);
  const auto idle_since = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.closed_within(5s));
  const auto elapsed = std::chrono::steady_clock::now() - idle_since;
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 3s);
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
  expect_healthy();
}

TEST_F(ServerRobustnessTest, RequestTimeoutDoesNotApplyBetweenRequests) {
  http::ServerOptions options;
  options.request_timeout = 200ms;
  options.idle_timeout = 10s;
  start(options);
  HttpConnection c(port());
  ASSERT_EQ(c.request("GET", "/health").status, 200);
  std::this_thread::sleep_for(700ms);  // idle, far past the request timeout
  EXPECT_EQ(c.request("GET", "/health").status, 200);
  expect_healthy();
}

TEST_F(ServerRobustnessTest, ClientThatDoesNotReadIsCutOffAfterTheWriteTimeout) {
  http::ServerOptions options;
  options.write_timeout = 300ms;
  start(options);
  HttpConnection c(port());
  // 32 MiB is more than the socket buffers of both ends hold, and the client reads nothing.
  c.send_raw("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 1; }));
  const auto sent = std::chrono::steady_clock::now();
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }, 5s));
  EXPECT_GE(std::chrono::steady_clock::now() - sent, 250ms);
  expect_healthy();
}

TEST_F(ServerRobustnessTest, PipelinedRequestsAreAnsweredInOrder) {
  start();
  HttpConnection c(port());
  // The first answer comes from another thread 100 ms later; the others would be instant.
  c.send_raw(
      "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\ntwo"
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().body, "slow");
  EXPECT_EQ(c.read_response().body, "two");
  EXPECT_EQ(c.read_response().body, "{}");
  EXPECT_EQ(c.request("GET", "/health").status, 200);
  expect_healthy();
}

TEST_F(ServerRobustnessTest, ClientDisconnectSetsTheCancellation) {
  start();
  {
    HttpConnection c(port());
    c.send_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(handler_.wait_held(1));
    EXPECT_FALSE(handler_.held(0).cancelled->cancelled());
  }  // the client goes away while the handler holds its request
  const TestHandler::Held held = handler_.held(0);
  EXPECT_TRUE(eventually([&] { return held.cancelled->cancelled(); }));
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
  // Answering anyway is harmless: nothing is written, nothing breaks.
  held.respond(http::json_response(200, "late"));

  // A client that resets the connection (SO_LINGER 0) rather than closing it.
  {
    HttpConnection c(port());
    c.send_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(handler_.wait_held(2));
    const linger reset{1, 0};
    ASSERT_EQ(::setsockopt(c.fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  }
  EXPECT_TRUE(eventually([&] { return handler_.held(1).cancelled->cancelled(); }));
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
  expect_healthy();
}

TEST_F(ServerRobustnessTest, PipelinedBytesWhileHandlingDoNotCancel) {
  start();
  HttpConnection c(port());
  c.send_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(handler_.wait_held(1));
  // The next request arrives while the first is with the handler: the socket becomes
  // readable, but the client has not gone.
  c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(handler_.held(0).cancelled->cancelled());
  handler_.held(0).respond(http::json_response(200, "held"));
  EXPECT_EQ(c.read_response().body, "held");
  EXPECT_EQ(c.read_response().body, "{}");
  expect_healthy();
}

TEST_F(ServerRobustnessTest, SeveralIoThreads) {
  http::ServerOptions options;
  options.io_threads = 4;
  start(options);
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      try {
        HttpConnection c(port());
        for (int i = 0; i < 100; ++i) {
          const std::string body = std::to_string(t) + "-" + std::to_string(i);
          if (c.request("POST", "/echo", body).body != body) ++failures;
          if (c.request("GET", "/health").status != 200) ++failures;
        }
      } catch (const std::exception&) {
        ++failures;
      }
    });
  }
  // A disconnect is still noticed with several threads.
  {
    HttpConnection c(port());
    c.send_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(handler_.wait_held(1));
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(eventually([&] { return handler_.held(0).cancelled->cancelled(); }));
  expect_healthy();
}

TEST_F(ServerRobustnessTest, ConnectionsOverTheLimitAreClosed) {
  http::ServerOptions options;
  options.max_connections = 2;
  start(options);
  EXPECT_EQ(server_->max_connections(), 2U);
  auto a = std::make_unique<HttpConnection>(port());
  HttpConnection b(port());
  ASSERT_EQ(a->request("GET", "/health").status, 200);
  ASSERT_EQ(b.request("GET", "/health").status, 200);
  EXPECT_EQ(server_->open_connections(), 2U);
  {
    HttpConnection over(port());
    over.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(over.closed_within(3s));
  }
  a.reset();
  ASSERT_TRUE(eventually([&] { return server_->open_connections() == 1; }));
  expect_healthy();
  EXPECT_EQ(b.request("GET", "/health").status, 200);
}

TEST_F(ServerRobustnessTest, AcceptingCarriesOnAfterRunningOutOfDescriptors) {
  start();
  // Take every path once before descriptors run out: UBSan's type check, on its first
  // sight of a dynamic type, probes memory through a pipe, and without a free descriptor
  // it would report a false "invalid vptr".
  expect_healthy();
  expect_healthy();
  // Fill this process's descriptor table (the server's, too) ...
  struct Fillers {
    std::vector<int> fds;
    void release() {
      for (const int fd : fds) ::close(fd);
      fds.clear();
    }
    ~Fillers() { release(); }  // also when an assertion ends the test early
  } fillers;
  for (;;) {
    const int fd = ::dup(STDERR_FILENO);
    if (fd < 0) break;
    fillers.fds.push_back(fd);
  }
  ASSERT_EQ(errno, EMFILE);
  ASSERT_FALSE(fillers.fds.empty());
  // ... but for one, which the client takes: the kernel completes the connection, and the
  // server's accept() fails with EMFILE.
  ::close(fillers.fds.back());
  fillers.fds.pop_back();
  HttpConnection c(port());
  c.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(300ms);  // several failed accepts
  fillers.release();
  // Without the retry, accepting would have ended for good and this would time out.
  EXPECT_EQ(c.read_response().status, 200);
  expect_healthy();
}

// 10,000 idle keep-alive connections need 10,000 descriptors on each side. This machine's
// hard limit may be near 20,000, so the clients live in a child process (forked before the
// server's threads start) with a descriptor table of its own.
[[noreturn]] void hold_connections(std::uint16_t port, std::size_t count, int to_parent, int from_parent) {
  std::string result = "ok\n";
  int code = 0;
  try {
    std::vector<std::unique_ptr<HttpConnection>> connections;
    connections.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      connections.push_back(std::make_unique<HttpConnection>(port, 20));
      if (connections.back()->request("GET", "/health").status != 200)
        throw std::runtime_error("connection " + std::to_string(i) + ": /health did not answer 200");
    }
    const std::string ready = "ready\n";
    if (::write(to_parent, ready.data(), ready.size()) < 0) throw std::runtime_error("write to parent");
    char go = 0;
    if (::read(from_parent, &go, 1) != 1) throw std::runtime_error("the parent gave up");
    // Still usable: a few, spread over the whole range.
    for (const std::size_t i : {std::size_t{0}, std::size_t{1}, count / 3, count / 2, count - 2, count - 1}) {
      if (connections[i]->request("GET", "/health").status != 200)
        throw std::runtime_error("connection " + std::to_string(i) + " no longer answers");
    }
  } catch (const std::exception& e) {
    result = std::string("error: ") + e.what() + "\n";
    code = 1;
  }
  if (::write(to_parent, result.data(), result.size()) < 0) code = 2;
  ::_exit(code);  // no destructors, no gtest: the kernel closes everything
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

std::string read_line(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (line.empty() || line.back() != '\n') {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return line + "(timed out)";
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char c = 0;
    if (::read(fd, &c, 1) != 1) return line + "(child ended)";
    line += c;
  }
  line.pop_back();
  return line;
}

TEST_F(ServerRobustnessTest, TenThousandIdleKeepAliveConnections) {
  constexpr std::size_t kConnections = 10'000;
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < kConnections + 512) {
    GTEST_SKIP() << "RLIMIT_NOFILE's hard limit is " << limit.rlim_max << "; this test needs "
                 << kConnections + 512 << " descriptors in each of two processes";
  }
  http::ServerOptions options;
  options.port = 0;
  // The constructor raises the soft limit to the hard one (the child inherits it), and
  // starts no thread: the fork below happens in a single-threaded process.
  server_ = std::make_unique<http::Server>(options, handler_);
  ASSERT_GE(server_->max_connections(), kConnections + 1);
  const std::uint16_t server_port = port();
  int to_parent[2];
  int to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(to_parent[0]);
    ::close(to_child[1]);
    hold_connections(server_port, kConnections, to_parent[1], to_child[0]);
  }
  ::close(to_parent[1]);
  ::close(to_child[0]);
  thread_ = std::thread([this] { server_->run(); });

  const std::size_t rss_before = resident_bytes();
  const auto started = std::chrono::steady_clock::now();
  const std::string ready = read_line(to_parent[0], 60s);
  EXPECT_EQ(ready, "ready");
  if (ready == "ready") {
    std::cerr << "[          ] " << kConnections << " connections opened in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                       started)
                     .count()
              << " ms; the server's resident memory grew by " << (resident_bytes() - rss_before) / 1024
              << " KiB\n";
    EXPECT_EQ(server_->open_connections(), kConnections);
    // A fresh connection is still served while 10,000 are held.
    expect_healthy();
    EXPECT_EQ(::write(to_child[1], "g", 1), 1);
    EXPECT_EQ(read_line(to_parent[0], 60s), "ok");
  }
  ::close(to_child[1]);  // a child still waiting for "go" gives up
  ::close(to_parent[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  // The child's exit closed all of its connections: the server notices every one.
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }, 20s))
      << server_->open_connections() << " still open";
  expect_healthy();
}

TEST_F(ServerRobustnessTest, StopClosesIdleAnswers503WhileReceivingAndFinishesInFlight) {
  start();
  HttpConnection held(port());
  held.send_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(handler_.wait_held(1));
  HttpConnection idle(port());
  ASSERT_EQ(idle.request("GET", "/health").status, 200);
  HttpConnection receiving(port());
  receiving.send_raw("GET /v1/embeddings HTTP/1.1\r\nHost: x\r\n");  // not finished
  std::this_thread::sleep_for(200ms);

  server_->stop();
  EXPECT_TRUE(idle.closed_within(3s));
  // A request being received when stop began is answered 503, and its connection closed.
  receiving.send_raw("\r\n");
  expect_error_and_close(receiving, 503, "Unhealthy");
  EXPECT_EQ(last_error_target(), "/v1/embeddings");
  // The request in flight finishes, with Connection: close.
  EXPECT_FALSE(handler_.held(0).cancelled->cancelled());
  handler_.held(0).respond(http::json_response(200, "done"));
  const HttpResponse answer = held.read_response();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "done");
  EXPECT_EQ(answer.headers.at("connection"), "close");
  thread_.join();  // run() returns once the last connection has ended
  EXPECT_EQ(server_->open_connections(), 0U);
  server_.reset();
}

TEST_F(ServerRobustnessTest, AnswerAfterTheShutdownGraceIsHarmless) {
  http::ServerOptions options;
  options.shutdown_grace = 200ms;
  start(options);
  HttpConnection c(port());
  c.send_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(handler_.wait_held(1));
  const auto stopped = std::chrono::steady_clock::now();
  stop_and_join();  // the request is still held: run() returns after the grace anyway
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, 3s);
  EXPECT_TRUE(c.closed_within(3s));
  // The abandoned request's Cancellation is set, so its queued work would be dropped.
  EXPECT_TRUE(handler_.held(0).cancelled->cancelled());
  // The handler answers after the server is gone: nothing happens.
  handler_.held(0).respond(http::json_response(200, "too late"));
  start();
  expect_healthy();
}

}  // namespace
}  // namespace warden

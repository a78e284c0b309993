// The socket layer against a hostile client, over a real socket: floods of empty header
// fields, chunk extensions and trailers (answered at the limit, with the process' resident
// memory checked afterwards), request smuggling through Transfer-Encoding (400 and the
// connection closed, the smuggled request never seen), HTTP/1.1 without Host, bare-LF chunk
// framing, Expect, HEAD, absolute-form targets, and connections that never send a byte.

#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "http/http_client.hpp"
#include "http/server.hpp"
#include "http/server_fixture.hpp"
#include "support/resident_memory.hpp"

namespace warden {
namespace {

using namespace std::chrono_literals;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::resident_bytes;

class HostileClientTest : public testing::ServerFixture {};

// Sends `head`, then `piece` again and again (up to `total` bytes) in small writes with a
// pause between them, as a client trickling a flood does (each read of the server then sees
// a few KiB, never its limit at once), then `tail`. Stops early once the server answers or
// stops reading. Returns the bytes of `piece` that went out.
std::size_t flood(HttpConnection& c, const std::string& head, const std::string& piece, std::size_t total,
                  const std::string& tail = {}) {
  if (!c.send_raw(head)) return 0;
  std::string block;
  while (block.size() < 4096) block += piece;
  std::size_t sent = 0;
  while (sent < total) {
    if (!c.send_raw(block)) return sent;
    sent += block.size();
    pollfd p{c.fd(), POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) return sent;  // an answer (or the end) is already there
    if (sent % (64 * 1024) < block.size()) std::this_thread::sleep_for(1ms);
  }
  c.send_raw(tail);
  return sent;
}

constexpr std::size_t kMiB = 1024 * 1024;

TEST_F(HostileClientTest, EmptyHeaderFieldsCountAgainstTheLimit) {
  start();
  // Two and a half million "a:\r\n" lines and the blank line that ends the head, in one
  // write: 10 MB against a limit of 16 KiB. (Beast's own limit let exactly this through: it
  // counts only what is left unparsed in a read, and empty fields never leave enough.)
  // Built before the first measure, so that only the server's memory is counted.
  const std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n";
  std::string request;
  request.reserve(head.size() + 4 * 2'500'000 + 2);
  request += head;
  for (int i = 0; i < 2'500'000; ++i) request += "a:\r\n";
  request += "\r\n";
  const std::size_t before = resident_bytes();
  for (int round = 0; round < 3; ++round) {
    HttpConnection c(port());
    c.send_raw(request);
    expect_error_and_close(c, 431, "Validation");
  }
  EXPECT_LT(resident_bytes(), before + 32 * kMiB);
  expect_healthy();
}

TEST_F(HostileClientTest, ChunkExtensionsCountAgainstTheLimit) {
  start();
  const std::size_t before = resident_bytes();
  HttpConnection c(port());
  flood(
      c,
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "1;ext=",
      "a", 20 * kMiB);
  expect_error_and_close(c, 400, "Validation");
  EXPECT_LT(resident_bytes(), before + 32 * kMiB);
  {
    // Many small extensions, each line short, add up the same way.
    HttpConnection d(port());
    flood(d,
          "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: "
          "chunked\r\n\r\n",
          "1;" + std::string(100, 'e') + "\r\n{\r\n", 10 * kMiB, "0\r\n\r\n");
    expect_error_and_close(d, 400, "Validation");
  }
  EXPECT_LT(resident_bytes(), before + 32 * kMiB);
  expect_healthy();
}

TEST_F(HostileClientTest, TrailerFieldsCountAgainstTheLimit) {
  start();
  const std::size_t before = resident_bytes();
  HttpConnection c(port());
  flood(
      c,
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\n{}\r\n0\r\n",
      "a:\r\n", 10 * kMiB, "\r\n");
  expect_error_and_close(c, 400, "Validation");
  EXPECT_LT(resident_bytes(), before + 32 * kMiB);
  {
    // A trailer within the limit is read (and not merged into the request's headers).
    HttpConnection d(port());
    d.send_raw(
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: "
        "chunked\r\n\r\n"
        "2\r\n{}\r\n0\r\nX-Trailer: 1\r\n\r\n");
    const HttpResponse r = d.read_response();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "{}");
  }
  expect_healthy();
}

// RFC 9112 §6.3: a Transfer-Encoding the server does not end with chunked leaves the body's
// length unknown. Reading the body as empty would hand its bytes to the parser as the next
// request: the smuggled GET below must never be answered.
TEST_F(HostileClientTest, TransferEncodingOtherThanChunkedIs400AndCloses) {
  start();
  const std::vector<std::string> encodings = {
      "Transfer-Encoding: gzip\r\n",
      "Transfer-Encoding: identity\r\n",
      "Transfer-Encoding: xchunked\r\n",
      "Transfer-Encoding: chunked, gzip\r\n",
      "Transfer-Encoding: gzip, chunked\r\n",
      "Transfer-Encoding: chunked, chunked\r\n",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
      "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
      "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
  };
  for (const std::string& te : encodings) {
    HttpConnection c(port());
    c.send_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + te +
               "\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
    const HttpResponse r = c.read_response();
    EXPECT_EQ(r.status, 400) << te << r.body;
    EXPECT_EQ(r.headers.at("connection"), "close") << te;
    EXPECT_TRUE(c.closed_within(3s)) << te;
  }
  // The plain form still works.
  HttpConnection ok(port());
  ok.send_raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "2\r\n{}\r\n0\r\n\r\n");
  EXPECT_EQ(ok.read_response().body, "{}");
  EXPECT_EQ(handler_.errors().size(), encodings.size());
  expect_healthy();
}

TEST_F(HostileClientTest, Http11WithoutExactlyOneHostIs400) {
  start();
  {
    HttpConnection c(port());
    c.send_raw("GET /health HTTP/1.1\r\n\r\n");
    expect_error_and_close(c, 400, "Validation");
  }
  {
    HttpConnection c(port());
    c.send_raw("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    expect_error_and_close(c, 400, "Validation");
  }
  {
    // HTTP/1.0 had no Host requirement.
    HttpConnection c(port());
    c.send_raw("GET /health HTTP/1.0\r\n\r\n");
    EXPECT_EQ(c.read_response().status, 200);
  }
  expect_healthy();
}

TEST_F(HostileClientTest, BareLfChunkFramingIs400AtOnce) {
  start();
  HttpConnection c(port());
  const auto started = std::chrono::steady_clock::now();
  c.send_raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\n{}\n0\n\n");
  expect_error_and_close(c, 400, "Validation");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  {
    // After a chunk's data, the next chunk line too.
    HttpConnection d(port());
    d.send_raw(
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: "
        "chunked\r\n\r\n"
        "2\r\n{}\r\n0\n\n");
    expect_error_and_close(d, 400, "Validation");
  }
  {
    // A bare LF in the head is refused as well.
    HttpConnection d(port());
    d.send_raw("GET /health HTTP/1.1\nHost: x\n\n");
    expect_error_and_close(d, 400, "Validation");
  }
  expect_healthy();
}

TEST_F(HostileClientTest, ExpectContinueGets100ThenTheAnswer) {
  start();
  HttpConnection c(port());
  c.send_raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
      "Expect: 100-continue\r\n\r\n");
  EXPECT_EQ(c.take_buffered(25, 3s), "HTTP/1.1 100 Continue\r\n\r\n");
  c.send_raw("{}");
  const HttpResponse r = c.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{}");
  // The connection goes on.
  EXPECT_EQ(c.request("GET", "/health").status, 200);

  HttpConnection other(port());
  other.send_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: something-else\r\n\r\n{}");
  expect_error_and_close(other, 417, "Validation");
  expect_healthy();
}

TEST_F(HostileClientTest, HeadAnswersTheGetHeadersWithoutABody) {
  start();
  HttpConnection c(port());
  c.send_raw("HEAD /big HTTP/1.1\r\nHost: x\r\n\r\n");
  const HttpResponse r = c.read_response(/*head=*/true);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("content-length"), std::to_string(32 << 20));
  // No body followed: the next answer on the connection starts at once.
  const HttpResponse next = c.request("GET", "/health");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "{}");
}

TEST_F(HostileClientTest, AbsoluteFormTargetsAreServed) {
  start();
  HttpConnection c(port());
  c.send_raw("GET http://127.0.0.1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const HttpResponse r = c.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{}");
  c.send_raw("GET HTTPS://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 404);  // the path "/", which the test handler does not serve
}

// A connect() that never sends must not hold a connection slot for the keep-alive timeout.
TEST_F(HostileClientTest, ANewConnectionMustSendItsHeadWithinTheHeaderTimeout) {
  http::ServerOptions options;
  options.header_timeout = 300ms;
  options.idle_timeout = 20s;
  options.request_timeout = 20s;
  start(options);
  const auto started = std::chrono::steady_clock::now();
  HttpConnection silent(port());
  EXPECT_TRUE(silent.closed_within(3s));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  // Nor may a head trickle in for longer.
  HttpConnection slow(port());
  slow.send_raw("GET /health HTTP/1.1\r\n");
  EXPECT_TRUE(slow.closed_within(3s));
  // A keep-alive connection between requests has the (longer) idle timeout.
  HttpConnection kept(port());
  EXPECT_EQ(kept.request("GET", "/health").status, 200);
  EXPECT_FALSE(kept.closed_within(600ms));
  EXPECT_EQ(kept.request("GET", "/health").status, 200);
  expect_healthy();
}

}  // namespace
}  // namespace warden

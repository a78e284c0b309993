// Hostile gRPC clients against the in-process server: whatever one connection does, the
// server's memory stays bounded and it keeps answering everyone else.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "embed/hashing_embedder.hpp"
#include "grpc/grpc_server.hpp"
#include "grpc/raw_http2_client.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "support/metrics_text.hpp"
#include "support/resident_memory.hpp"
#include "tei.grpc.pb.h"

namespace warden::grpc {
namespace {

using namespace std::chrono_literals;

// The hashing embedder, counting the inputs it embeds.
class CountingEmbedder final : public embed::Embedder {
 public:
  [[nodiscard]] std::string_view id() const noexcept override { return "counting"; }
  [[nodiscard]] std::size_t dim() const noexcept override { return embed::HashingEmbedder::kDim; }
  [[nodiscard]] bool semantic() const noexcept override { return false; }
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return 0; }
  [[nodiscard]] bool unit_vectors() const noexcept override { return true; }
  [[nodiscard]] embed::PreparedInput prepare(std::string_view text,
                                             const embed::InputOptions& options) const override {
    return inner_.prepare(text, options);
  }
  void embed_prepared(std::span<const embed::PreparedInput* const> inputs,
                      std::span<float> out) const override {
    embedded_ += inputs.size();
    inner_.embed_prepared(inputs, out);
  }
  [[nodiscard]] std::size_t embedded() const noexcept { return embedded_.load(); }

 private:
  embed::HashingEmbedder inner_;
  mutable std::atomic<std::size_t> embedded_{0};
};

// Waits until `count` stops changing for `quiet` (or `limit` passes); returns its value.
template <class F>
std::size_t settled(F count, std::chrono::milliseconds quiet = 700ms, std::chrono::seconds limit = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::size_t last = count();
  auto since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    const std::size_t now = count();
    if (now != last) {
      last = now;
      since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - since >= quiet) {
      break;
    }
  }
  return last;
}

// A stream whose client writes and never reads: the server holds at most
// max_stream_in_flight answers for it and then stops reading (it used to read and compute
// every message, keeping every unsent answer: ~50 MB/s on a real model).
TEST(GrpcHostileClient, AStreamThatIsNeverReadStopsBeingRead) {
  CountingEmbedder embedder;
  serving::MetricsRegistry metrics;
  http::Service service(embedder, {}, &metrics);
  GrpcOptions g;
  g.max_stream_in_flight = 16;
  GrpcServer server(service.runtime().tasks(), g, &metrics);
  auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                                       ::grpc::InsecureChannelCredentials());
  auto stub = tei::v1::Embed::NewStub(channel);
  ::grpc::ClientContext ctx;
  auto stream = stub->EmbedStream(&ctx);
  const std::size_t before = testing::resident_bytes();
  constexpr std::size_t kSent = 50000;
  std::atomic<std::size_t> written{0};
  std::thread writer([&] {
    tei::v1::EmbedRequest rq;
    rq.set_inputs("a few words to embed");
    for (std::size_t i = 0; i < kSent; ++i) {
      if (!stream->Write(rq)) break;
      ++written;
    }
  });
  const std::size_t computed = settled([&] { return embedder.embedded(); });
  // What the server computed is what it holds (16) plus what the transport's flow-control
  // windows took towards the client (each answer ~1 KiB): far below what was sent.
  EXPECT_LT(computed, kSent / 10) << written.load() << " written";
  // The figure for docs/api.md: what the server grew by while the client wrote.
  std::fprintf(stderr, "never-reading stream: %zu of %zu messages computed, resident +%.1f MB\n", computed,
               written.load(),
               (static_cast<double>(testing::resident_bytes()) - static_cast<double>(before)) / 1e6);
  // Everyone else is still answered.
  tei::v1::EmbedRequest one;
  one.set_inputs("hello");
  tei::v1::EmbedResponse answer;
  ::grpc::ClientContext other;
  other.set_deadline(std::chrono::system_clock::now() + 10s);
  EXPECT_TRUE(stub->Embed(&other, one, &answer).ok());
  ctx.TryCancel();
  writer.join();
  (void)stream->Finish();
  server.shutdown(1s);
  service.shutdown(1s);
}

// The rapid-reset flood (CVE-2023-44487): one connection opens calls and resets each at
// once, so that none counts against its limit of open streams (gRPC 1.51 kept ~20 KB for
// each: 60,000 resets grew the server by 1.2 GB; calls to an unknown method or to the health
// service, which never reach Warden's code, by 330 MB). Past its reset limit the connection
// is sent GOAWAY and closed, whatever it calls, and everyone else is still answered.
TEST(GrpcHostileClient, RapidResetIsCutOffWithGoaway) {
  CountingEmbedder embedder;
  serving::MetricsRegistry metrics;
  http::Service service(embedder, {}, &metrics);
  GrpcOptions g;
  g.max_reset_burst = 500;
  GrpcServer server(service.runtime().tasks(), g, &metrics);
  const std::string hello("\x0a\x05hello", 7);  // EmbedRequest{inputs: "hello"}
  constexpr int kFlood = 60000;
  for (const char* method : {"/tei.v1.Embed/Embed", "/no.Such/Method"}) {
    SCOPED_TRACE(method);
    const std::size_t before = testing::resident_bytes();
    const auto start = std::chrono::steady_clock::now();
    int sent = 0;
    testing::RawHttp2Client flood(server.port());
    while (sent < kFlood && flood.open_and_reset(method, hello, 50)) sent += 50;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!flood.closed() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(flood.closed());
    EXPECT_TRUE(flood.goaway());
    const double grown = static_cast<double>(testing::resident_bytes()) - static_cast<double>(before);
    EXPECT_LT(grown, 64e6);
    // The figure for docs/api.md.
    std::fprintf(
        stderr,
        "rapid reset on %s: cut off within %.2f s (%d calls written, most never read), resident +%.1f MB\n",
        method, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), sent,
        grown / 1e6);
  }
  // Resets within the limit are a client's right (deadlines, users who leave): nothing happens.
  {
    testing::RawHttp2Client calm(server.port());
    ASSERT_TRUE(calm.open_and_reset("/tei.v1.Embed/Embed", hello, 400));
    std::this_thread::sleep_for(300ms);
    EXPECT_FALSE(calm.closed());
    EXPECT_FALSE(calm.goaway());
  }
  EXPECT_EQ(testing::sample_value(metrics.render(), "warden_grpc_connections_refused_total"), 2.0);
  // Everyone else is still answered.
  auto stub = tei::v1::Embed::NewStub(::grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                                                            ::grpc::InsecureChannelCredentials()));
  tei::v1::EmbedRequest one;
  one.set_inputs("hello");
  tei::v1::EmbedResponse answer;
  ::grpc::ClientContext other;
  other.set_deadline(std::chrono::system_clock::now() + 10s);
  const ::grpc::Status s = stub->Embed(&other, one, &answer);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  server.shutdown(1s);
  service.shutdown(1s);
}

// One unary call with `bytes` as the request message, as sent: what a client with a broken
// or hostile encoder sends.
::grpc::Status raw_unary(const std::shared_ptr<::grpc::Channel>& channel, const std::string& method,
                         const std::string& bytes) {
  ::grpc::GenericStub stub(channel);
  ::grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  ::grpc::Slice slice(bytes);
  const ::grpc::ByteBuffer request(&slice, 1);
  ::grpc::ByteBuffer response;
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  ::grpc::Status status;
  stub.UnaryCall(&ctx, method, {}, &request, &response, [&](::grpc::Status s) {
    const std::lock_guard lock(m);
    status = std::move(s);
    done = true;
    cv.notify_all();
  });
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return done; });
  return status;
}

class GrpcMalformed : public ::testing::Test {
 protected:
  GrpcMalformed() {
    service_ = std::make_unique<http::Service>(embedder_, http::ServiceOptions{}, &metrics_);
    server_ = std::make_unique<GrpcServer>(service_->runtime().tasks(), GrpcOptions{}, &metrics_);
    channel_ = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     ::grpc::InsecureChannelCredentials());
  }
  ~GrpcMalformed() override {
    server_->shutdown(1s);
    service_->shutdown(1s);
  }
  CountingEmbedder embedder_;
  serving::MetricsRegistry metrics_;
  std::unique_ptr<http::Service> service_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<::grpc::Channel> channel_;
};

// Bytes that are not the method's message are the request's fault, said with a message
// and counted — not UNIMPLEMENTED, which would tell the client the method does not exist.
TEST_F(GrpcMalformed, AnUnparsableMessageIsInvalidArgumentAndCounted) {
  for (const std::string& method :
       {std::string("/tei.v1.Embed/Embed"), std::string("/tei.v1.Rerank/Rerank"),
        std::string("/tei.v1.Tokenize/Tokenize"), std::string("/tei.v1.Info/Info")}) {
    SCOPED_TRACE(method);
    const ::grpc::Status s = raw_unary(channel_, method, std::string("\xff\xff\xff\xff", 4));
    EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_NE(s.error_message().find("not a valid tei.v1."), std::string::npos) << s.error_message();
    EXPECT_NE(metrics_.render().find(R"(warden_grpc_requests_total{code="INVALID_ARGUMENT",method=")" +
                                     method + R"("} 1)"),
              std::string::npos)
        << metrics_.render();
  }
  // A string field that is not UTF-8 (field 1, `inputs`, length 2: 0xC0 0xAF).
  const ::grpc::Status utf8 = raw_unary(channel_, "/tei.v1.Embed/Embed", std::string("\x0a\x02\xc0\xaf", 4));
  EXPECT_EQ(utf8.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << utf8.error_message();
  // A valid message still works, and nothing reached the engine before it.
  EXPECT_EQ(embedder_.embedded(), 0U);
  EXPECT_TRUE(raw_unary(channel_, "/tei.v1.Embed/Embed", std::string("\x0a\x02hi", 4)).ok());
}

// A bad message inside a stream ends it with INVALID_ARGUMENT after the answers before it
// (it used to end the stream as if the client had finished: OK, with answers missing).
TEST_F(GrpcMalformed, ABadMessageInAStreamEndsItWithInvalidArgument) {
  auto stub = tei::v1::Embed::NewStub(channel_);
  ::grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  auto stream = stub->EmbedStream(&ctx);
  tei::v1::EmbedRequest good;
  good.set_inputs("fine");
  tei::v1::EmbedRequest bad;
  bad.set_inputs(std::string("\xc0\xaf", 2));  // protobuf sends it, logging that it is not UTF-8
  ASSERT_TRUE(stream->Write(good));
  ASSERT_TRUE(stream->Write(good));
  stream->Write(bad);
  stream->Write(good);
  stream->WritesDone();
  std::size_t answers = 0;
  tei::v1::EmbedResponse res;
  while (stream->Read(&res)) ++answers;
  const ::grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(answers, 2U);
}

}  // namespace
}  // namespace warden::grpc

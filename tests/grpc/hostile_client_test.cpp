// Hostile gRPC clients against the in-process server: whatever one connection does, the
// server's memory stays bounded and it keeps answering everyone else.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "embed/hashing_embedder.hpp"
#include "grpc/grpc_server.hpp"
#include "http/service.hpp"
#include "serving/metrics.hpp"
#include "support/resident_memory.hpp"
#include "tei.grpc.pb.h"

namespace warden::grpc {
namespace {

using namespace std::chrono_literals;

// The hashing embedder, counting the inputs it embeds.
class CountingEmbedder final : public Embedder {
 public:
  [[nodiscard]] std::string_view id() const noexcept override { return "counting"; }
  [[nodiscard]] std::size_t dim() const noexcept override { return HashingEmbedder::kDim; }
  [[nodiscard]] bool semantic() const noexcept override { return false; }
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return 0; }
  [[nodiscard]] bool unit_vectors() const noexcept override { return true; }
  [[nodiscard]] PreparedInput prepare(std::string_view text, const InputOptions& options) const override {
    return inner_.prepare(text, options);
  }
  void embed_prepared(std::span<const PreparedInput* const> inputs, std::span<float> out) const override {
    embedded_ += inputs.size();
    inner_.embed_prepared(inputs, out);
  }
  [[nodiscard]] std::size_t embedded() const noexcept { return embedded_.load(); }

 private:
  HashingEmbedder inner_;
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
  GrpcServer server(service.pipeline(), g, &metrics);
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

}  // namespace
}  // namespace warden::grpc

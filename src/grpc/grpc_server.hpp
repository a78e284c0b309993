#pragma once
// The gRPC transport: TEI's tei.v1 protocol (src/grpc/tei.proto) — Info, Embed, Predict,
// Rerank and Tokenize, unary and streaming — on the same inference pipeline as the HTTP
// routes, so that the same input gives the same numbers over either, shares the result
// cache, and waits in the same admission queue. The API key, when set, is required as
// metadata `authorization: Bearer <key>`; gRPC's health service and server reflection are on
// and need no key.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace warden::serving {
class MetricsRegistry;
}  // namespace warden::serving

namespace warden::serving::tasks {
class Tasks;
}  // namespace warden::serving::tasks

namespace warden::grpc {

struct GrpcOptions {
  std::string hostname = "127.0.0.1";
  int port = 0;                              // 0: any free port (port() says which)
  std::string api_key;                       // non-empty: every service but health and reflection needs it
  std::size_t max_message_bytes = 2U << 20;  // largest request message; more: RESOURCE_EXHAUSTED
  std::size_t max_stream_in_flight =
      64;  // messages of one stream held at once: computing, or answered and unsent
  // What a flood of clients can hold: calls open at once on one connection (more wait in
  // the client), and the memory gRPC may spend on calls and messages (past it, new calls
  // are refused with RESOURCE_EXHAUSTED).
  int max_streams_per_connection = 100;
  std::size_t memory_limit_bytes = std::size_t{256} << 20;
  // Calls one connection may reset at once, then per second (HTTP/2 "rapid reset": reset
  // calls escape the stream limit); past it the client gets GOAWAY and is disconnected.
  double max_reset_burst = 1000;
  double resets_per_second = 33;
};

class GrpcServer {
 public:
  // Binds and starts serving the runtime's tasks (serving/runtime.hpp), a peer of HTTP's
  // router on them: the same limits (a Rerank's batch size, the truncation Info reports) and
  // the same models. Error(Io) when the address cannot be bound. The tasks (and metrics,
  // which may be null) must outlive the server.
  GrpcServer(serving::tasks::Tasks& tasks, GrpcOptions options, serving::MetricsRegistry* metrics);
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;
  // shutdown(0) unless it ran already.
  ~GrpcServer();

  [[nodiscard]] int port() const noexcept;

  // What grpc.health.v1.Health answers for every service: SERVING (the default) or
  // NOT_SERVING — the gRPC side of HTTP's readiness (/health), set while the server starts.
  void set_serving(bool serving);

  // Stops accepting calls and waits for the calls in progress (at most `grace`, then they
  // are cancelled). Call it before the pipeline's scheduler drains.
  void shutdown(std::chrono::milliseconds grace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden::grpc

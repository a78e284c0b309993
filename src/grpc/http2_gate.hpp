#pragma once
// Internal to src/grpc/: the gRPC port's front door. It accepts the TCP connections itself
// and relays each one to gRPC over a socket pair, reading the HTTP/2 frame headers the
// client sends on the way. gRPC 1.51 (Debian's) predates the defence against "rapid reset"
// (CVE-2023-44487): a client that opens calls and resets each at once is never held by its
// concurrent-stream limit, and every reset call costs the server memory it does not give
// back (60,000 resets on one connection: +1.2 GB). The gate limits the streams a client may
// reset with a token bucket per connection (nghttp2's defaults: a burst of 1,000, then 33 a
// second); past it the client is sent GOAWAY (ENHANCE_YOUR_CALM) and the connection is
// closed, which ends its calls in gRPC.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace grpc {
class Server;
}

namespace warden::grpc {

struct ResetLimit {
  double burst = 1000;     // resets a connection may send at once
  double per_second = 33;  // ... and then, sustained
};

class Http2Gate {
 public:
  // Binds `host`:`port` (0: any free port) and listens; Error(Io) when it cannot.
  // `on_refused` (may be empty) runs on the relay thread for each connection closed for
  // its resets.
  Http2Gate(const std::string& host, int port, ResetLimit limit, std::function<void()> on_refused);
  Http2Gate(const Http2Gate&) = delete;
  Http2Gate& operator=(const Http2Gate&) = delete;
  // close()s unless it ran.
  ~Http2Gate();

  [[nodiscard]] int port() const noexcept;
  // Starts accepting connections and handing each to `server` (which must outlive close()).
  void open(::grpc::Server& server);
  // Accepts no more connections; those open are still relayed (a server shutting down sends
  // its GOAWAY through them).
  void stop_accepting();
  // Closes every connection and stops relaying.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden::grpc

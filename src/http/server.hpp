#pragma once
// The HTTP/1.1 server: Boost.Beast on Asio, asynchronous I/O with keep-alive. Requests
// that run the model are posted to a compute thread and their answer is written back on
// the connection's strand, so I/O threads never block on inference. Beast stays inside
// server.cpp (pimpl): it is heavy to compile, and no other file needs it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace warden::http {

class Handler;

struct ServerOptions {
  std::string hostname = "127.0.0.1";
  std::uint16_t port = 8080;              // 0: an ephemeral port (tests); port() says which
  std::size_t payload_limit = 2'000'000;  // bytes of body; more answers 413
  std::size_t io_threads = 1;
  bool handle_signals = false;  // stop gracefully on SIGINT / SIGTERM
};

class Server {
 public:
  // Binds and listens at once (throws Error(Io) when it cannot), so port() is valid as
  // soon as the constructor returns. handler is not owned and must outlive the server.
  Server(const ServerOptions& options, Handler& handler);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  [[nodiscard]] std::uint16_t port() const noexcept;

  // Serves until stop() (or a signal, with handle_signals); returns once in-flight
  // requests have been answered and every thread has ended.
  void run();

  // Thread-safe: stops accepting, closes idle connections, lets in-flight requests finish.
  void stop();

  // Public only so that server.cpp's connection class can name it; defined there.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden::http

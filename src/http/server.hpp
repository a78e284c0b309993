#pragma once
// The HTTP/1.1 server: Boost.Beast on Asio, asynchronous I/O with keep-alive. Requests
// that run the model are posted to a compute thread and their answer is written back on
// the connection's strand, so I/O threads never block on inference. Beast stays inside
// server.cpp (pimpl): it is heavy to compile, and no other file needs it.
//
// The socket layer owns what no route can decide: malformed or ambiguous HTTP (400, the
// rules in request_parser.hpp), headers, chunk extensions and trailers over the limit
// (431/400), bodies over the limit (413), Expect (100 Continue, 417), HEAD (the GET answer
// without its body), absolute-form targets, timeouts, keep-alive, client disconnects (the
// request's Cancellation is set), the connection limit and graceful shutdown (503).

#include <chrono>
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
  std::size_t header_limit = 16 * 1024;   // bytes of request line + headers; more answers 431
  // With more than one thread each connection runs on its own strand, and
  // Handler::handle is called concurrently from several threads.
  std::size_t io_threads = 1;
  // A request's head (request line and headers) must arrive within this: from the connection's
  // start for its first request (a connect() that never sends is closed after it), from
  // the request's first byte for later ones on a keep-alive connection.
  std::chrono::milliseconds header_timeout{10'000};
  // Once the first byte of a request has arrived, the whole request (headers and body) must
  // arrive within this: a slow-loris client trickling bytes is cut off.
  std::chrono::milliseconds request_timeout{30'000};
  // A keep-alive connection waiting for its next request is closed after this. Longer than
  // the 60 s idle timeout of common load balancers (AWS ALB, GCP), so that a proxy never
  // reuses a connection the server has just closed, and as nginx's 75 s default.
  std::chrono::milliseconds idle_timeout{75'000};
  std::chrono::milliseconds write_timeout{30'000};  // to write a whole response
  // After stop(), requests in flight get this long before their connections are closed.
  std::chrono::milliseconds shutdown_grace{10'000};
  // Connections over this are accepted and closed at once, so that the server itself never
  // runs out of file descriptors. 0: the file-descriptor limit less a reserve of 128 (half the
  // limit when it is under 256).
  std::size_t max_connections = 0;
  // Raise RLIMIT_NOFILE's soft limit to the hard limit when the server is constructed (the
  // soft limit is often 1024, fewer than a busy server's idle keep-alive connections).
  bool raise_fd_limit = true;
  bool handle_signals = false;  // stop gracefully (drain) on SIGINT, SIGTERM or SIGHUP
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

  // Connections accepted and not yet closed (thread-safe; for /metrics).
  [[nodiscard]] std::size_t open_connections() const noexcept;

  // The connection limit in effect (options.max_connections, or the one derived from the
  // file-descriptor limit).
  [[nodiscard]] std::size_t max_connections() const noexcept;

  // Serves until stop() (or a signal, with handle_signals); returns once in-flight
  // requests have been answered (or the shutdown grace has passed) and every thread has
  // ended.
  void run();

  // Thread-safe: stops accepting, closes idle connections, lets in-flight requests finish.
  void stop();

  // Public only so that server.cpp's connection class can name it; defined there.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace warden::http

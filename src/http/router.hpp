#pragma once
// The HTTP API without the sockets: a request (method, path, content type, body) in, a
// response (status, JSON body) out. The server (server.hpp) owns the I/O and decides on
// which thread handle() runs; keeping this part pure lets tests drive every route and
// every error without a network.

#include <cstddef>
#include <string>
#include <string_view>

#include "embed/embedder.hpp"

namespace warden::http {

struct Request {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // path, optionally with a query string
  std::string_view content_type;
  std::string_view body;
};

struct Response {
  int status = 200;
  std::string body;  // JSON
};

class Router {
 public:
  // embedder is not owned and must outlive the router. handle() may be called from one
  // thread at a time only for compute routes (the server runs them on its one compute
  // thread); the cheap routes only read immutable state.
  explicit Router(const Embedder& embedder) : embedder_(embedder) {}

  // True when the route runs the model, so the server must not run it on an I/O thread.
  [[nodiscard]] static bool is_compute(std::string_view method, std::string_view target) noexcept;

  // Never throws: every failure becomes an error response.
  [[nodiscard]] Response handle(const Request& request) const noexcept;

  // An error response in the body format of the API that `target` belongs to (OpenAI's
  // under /v1/, TEI's elsewhere); for errors the server detects itself (413).
  [[nodiscard]] static Response error(std::string_view target, int status, std::string_view error_type,
                                      std::string_view message, std::string_view param = {});

 private:
  [[nodiscard]] Response route(const Request& request) const;
  [[nodiscard]] Response info() const;
  [[nodiscard]] Response tei_embed(std::string_view body) const;
  [[nodiscard]] Response openai_embed(std::string_view body) const;

  const Embedder& embedder_;
};

}  // namespace warden::http

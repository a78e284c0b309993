#pragma once
// The HTTP API without the sockets: a request (method, path, content type, body) in, a
// response (status, JSON body) out. The server (server.hpp) owns the I/O and decides on
// which thread handle() runs; keeping this part pure lets tests drive every route and
// every error without a network.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "embed/embedder.hpp"
#include "http/handler.hpp"

namespace warden::http {

class SerialExecutor;

class Router final : public Handler {
 public:
  // embedder is not owned and must outlive the router. Compute routes run on the router's
  // own compute thread; the cheap routes answer inline.
  explicit Router(const Embedder& embedder);
  ~Router() override;

  void handle(const Request& request, std::shared_ptr<const Cancellation> cancelled, Respond respond) override;
  [[nodiscard]] Response error(std::string_view target, int status, std::string_view error_type,
                               std::string_view message) const override {
    return error_response(target, status, error_type, message);
  }

  // True when the route runs the model, so the server must not run it on an I/O thread.
  [[nodiscard]] static bool is_compute(std::string_view method, std::string_view target) noexcept;

  // Synchronous: runs the route on the calling thread. Never throws: every failure
  // becomes an error response.
  [[nodiscard]] Response handle_now(const Request& request) const noexcept;

  // An error response in the body format of the API that `target` belongs to (OpenAI's
  // under /v1/, TEI's elsewhere); for errors the server detects itself (413).
  [[nodiscard]] static Response error_response(std::string_view target, int status, std::string_view error_type,
                                               std::string_view message, std::string_view param = {});

 private:
  [[nodiscard]] Response route(const Request& request) const;
  [[nodiscard]] Response info() const;
  [[nodiscard]] Response tei_embed(std::string_view body) const;
  [[nodiscard]] Response openai_embed(std::string_view body) const;

  const Embedder& embedder_;
  std::unique_ptr<SerialExecutor> compute_;
};

}  // namespace warden::http

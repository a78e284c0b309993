#pragma once
// What the server (server.hpp, the sockets) asks of the application (router.hpp, the
// routes): one request in, exactly one response out, possibly later and from another
// thread. The server owns connections, timeouts, keep-alive, X-Request-ID and the errors
// it detects itself (400, 413, 431); the handler owns everything a route decides.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/cancellation.hpp"

namespace warden::http {

struct Request {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // path, optionally with a query string
  std::string_view content_type;
  std::string_view authorization;  // the Authorization header, "" when absent
  std::string_view body;
  std::string_view request_id;  // the X-Request-ID the response will carry
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  std::string_view cache_control;  // the Cache-Control header, "" when absent (the result cache)
  std::string_view traceparent;    // W3C Trace Context's header, "" when absent
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
};

inline Response json_response(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Called exactly once per request, from any thread.
using Respond = std::function<void(Response)>;

class Handler {
 public:
  virtual ~Handler() = default;

  // Runs on an I/O thread and must not block there: work that computes is handed to other
  // threads, which call respond when done. The views in `request` stay valid until respond
  // has been called. `cancelled` is set by the server when the client disconnects first.
  virtual void handle(const Request& request, std::shared_ptr<const Cancellation> cancelled,
                      Respond respond) = 0;

  // The error body for a failure the server detects before a handler sees the request
  // (413 body too large, 431 headers too large, 400 malformed HTTP, 503 shutting down), in
  // the format of the API the target belongs to.
  [[nodiscard]] virtual Response error(std::string_view target, int status, std::string_view error_type,
                                       std::string_view message) const = 0;
};

}  // namespace warden::http

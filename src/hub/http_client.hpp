#pragma once
// Internal: the libcurl calls the hub needs (one easy handle per request), so hub.cpp is
// protocol logic only. Statuses are returned, never turned into errors here: what a 401
// or a 404 means depends on what was asked.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace warden::hub::detail {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  bool head = false;
  bool follow_redirects = false;  // at most 10; curl keeps Authorization to the first host
  std::uint64_t resume_from = 0;  // > 0: sends Range: bytes=N-
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds stall_timeout{30000};
};

struct HttpResponse {
  long status = 0;                             // of the last response (after redirects)
  std::map<std::string, std::string> headers;  // of the last response; names lowercase
  std::string body;                            // when no sink took it (capped at 1 MiB)
  std::string transport_error;                 // non-empty: the transfer failed (curl's message)
};

// Receives the body of a 200 or 206 response chunk by chunk; returns false to abort.
using BodySink = std::function<bool(long status, std::string_view chunk)>;

// Performs the request. Bodies of other statuses (and all bodies without a sink) land in
// HttpResponse::body. Throws Error(Internal) only when libcurl cannot be set up.
HttpResponse http_perform(const HttpRequest& request, const BodySink& sink = {});

// "warden/<version>".
std::string user_agent();

}  // namespace warden::hub::detail

#pragma once
// The route table: every path Warden answers, with its method, who may call it, which API's
// error body it answers with and its handler, each written once. The router (router.cpp)
// matches a request against it; tests/http/openapi_test.cpp checks that
// src/http/openapi.json documents exactly these routes. Internal to the router's files.

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "http/app.hpp"

namespace warden::http {

// Open: no API key (/health, for probes). Metrics: open only with --public-metrics (its
// series name the served models). Admin: the key is required, and without one configured
// the route is closed (403). Key: the API key when one is set.
enum class Access { Open, Metrics, Admin, Key };

// Which API's error body a route answers with: TEI's {"error", "error_type"} or OpenAI's
// {"error": {"message", "type", "param", "code"}} (also on the Cohere-style routes).
enum class Dialect { Tei, OpenAi };

struct RouteArgs {
  std::string_view body;
  std::string param;  // the {...} segment of a pattern, percent-decoded; empty otherwise
};
using RouteHandler = void (*)(App&, const CallPtr&, const RouteArgs&);

struct Route {
  std::string_view path;  // "/embed", or a pattern whose last segment is "{name}" (the rest of the path)
  std::string_view method;
  Access access;
  Dialect dialect;
  bool model_scoped;  // may follow a /models/{name}/ prefix
  RouteHandler handler;
};

[[nodiscard]] std::span<const Route> routes() noexcept;

// Whether `path` matches `route`'s path; `param` gets a pattern's {...} segment (raw).
[[nodiscard]] bool path_matches(const Route& route, std::string_view path, std::string_view& param) noexcept;

// The error dialect of a path: its route's, else OpenAI's under /v1/ and /v2/, else TEI's.
[[nodiscard]] Dialect dialect_of(std::string_view path) noexcept;

}  // namespace warden::http

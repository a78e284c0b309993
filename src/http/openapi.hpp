#pragma once
// The OpenAPI 3.0 description of Warden's HTTP API, served as GET /openapi.json.

#include <string_view>

namespace warden::http {

// The document: static JSON, valid for the whole life of the process. It is
// src/http/openapi.json, compiled in; kept by hand next to the route families' headers
// (src/http/<family>_routes.hpp), whose
// structs its request schemas describe (tests/http/openapi_test.cpp checks that it lists
// exactly the router's routes).
std::string_view openapi_json() noexcept;

}  // namespace warden::http

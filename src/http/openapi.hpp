#pragma once
// The OpenAPI 3.0 description of Warden's HTTP API, served as GET /openapi.json.

#include <string_view>

namespace warden::http {

// The document: static JSON, valid for the whole life of the process. Kept by hand next to
// src/http/requests.hpp, whose structs its request schemas describe.
std::string_view openapi_json() noexcept;

}  // namespace warden::http

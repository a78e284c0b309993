#include "http/openapi.hpp"

namespace warden::embedded {
// src/http/openapi.json, compiled in by CMake (warden_embed_text in src/CMakeLists.txt).
extern const std::string_view kOpenApiJson;
}  // namespace warden::embedded

namespace warden::http {

std::string_view openapi_json() noexcept {
  return embedded::kOpenApiJson;
}

}  // namespace warden::http

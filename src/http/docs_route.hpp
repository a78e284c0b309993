#pragma once
// The Swagger UI's pages: the handler.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

// docs_route.cpp: GET /docs (the Swagger UI's page over /openapi.json) and /docs/{file} (its assets).
void docs(App& app, std::shared_ptr<Call> call, const std::string& file);

}  // namespace warden::http

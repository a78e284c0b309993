#pragma once
// Warden's model management: the body, its parser and the handlers.

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

// Warden's POST /admin/models: {"model": source, "name"?: alias}. The source is what
// --model takes (a built-in name, a folder, an HF id ORG/NAME[@REV]); the name defaults to
// the one --model would give it. Names are 1-200 bytes without control characters.
struct AdminModelRequest {
  std::string source;
  std::string name;   // empty: derived from the source
  std::string dtype;  // empty: the server's --dtype; else float32|bfloat16|int8|auto (checked)
};
AdminModelRequest parse_admin_model(std::string_view body);

// admin_routes.cpp: GET /admin/models (list), POST /admin/models (load or replace), DELETE
// /admin/models/{name}.
void admin_list(App& app, std::shared_ptr<Call> call);
void admin_put(App& app, std::shared_ptr<Call> call, std::string_view body);
void admin_remove(App& app, std::shared_ptr<Call> call, const std::string& name);

}  // namespace warden::http

#pragma once
// Warden's /guard, and the guard every guarding route shares: the body, its parser, the handlers.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/guard.hpp"
#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

// Warden's POST /guard: {"inputs": str | [str], "model"?: str}.
struct GuardRequest {
  std::vector<std::string> inputs;
  bool single = false;  // `inputs` was one string (the answer is a list either way)
  std::string model;    // ignored: /guard decides with the guard's own model
};
GuardRequest parse_guard(std::string_view body);

// guard_route.cpp: Warden's /guard, and the guard every guarding route shares: judges the
// task's texts and answers with `format` (one verdict per text, in order), on a worker.
void guard(App& app, std::shared_ptr<Call> call, std::string_view body);
using GuardAnswer = std::function<Response(std::vector<guard::GuardResult> verdicts)>;
void guard_texts(App& app, std::shared_ptr<Call> call, serving::tasks::GuardTexts task, GuardAnswer format);

}  // namespace warden::http

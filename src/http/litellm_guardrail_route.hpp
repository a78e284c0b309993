#pragma once
// LiteLLM's Generic Guardrail API: the body, its parser and the handler.

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

// LiteLLM's Generic Guardrail API (POST /beta/litellm_basic_guardrail_api): {"texts": [str]
// (may be empty), "images"?, "tools"?, "structured_messages"?, "request_data"?, "input_type":
// "request"|"response", "litellm_call_id"?, "litellm_trace_id"?,
// "additional_provider_specific_params"?: {"block_on_abstain"?: bool}}. Only the texts are
// judged; the other fields are read for their type and otherwise ignored.
struct GuardrailRequest {
  std::vector<std::string> texts;
  std::string input_type = "request";
  bool block_on_abstain = false;  // fail closed on texts the guard cannot judge
};
GuardrailRequest parse_litellm_guardrail(std::string_view body);

// litellm_guardrail_route.cpp: LiteLLM's Generic Guardrail API: BLOCKED when the guard flags
// any text, else NONE.
void litellm_guardrail(App& app, std::shared_ptr<Call> call, std::string_view body);

}  // namespace warden::http

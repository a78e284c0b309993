// POST /beta/litellm_basic_guardrail_api: LiteLLM's Generic Guardrail API, the one endpoint
// its gateway calls before the LLM (input_type "request") and after it ("response") when
// Warden is configured as a `generic_guardrail_api` guardrail (docs/guard.md). The texts
// LiteLLM extracted are judged as /guard judges them; the answer is BLOCKED, naming the
// first flagged text, or NONE. A text the guard abstains on (a language the embedder does
// not read, text it cannot tokenize) passes unless the guardrail's config sets
// additional_provider_specific_params.block_on_abstain. Warden never rewrites a text, so
// it never answers GUARDRAIL_INTERVENED.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/guard_route.hpp"
#include "http/litellm_guardrail_route.hpp"

namespace warden::http {

// The body.

using namespace body;

GuardrailRequest parse_litellm_guardrail(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  GuardrailRequest request;
  // LiteLLM sends an empty list when a call has no text (an image-only request): nothing to judge.
  request.texts = string_items(required_field(obj, "texts"), "texts");
  if (std::optional<std::string> type = optional_string(obj, "input_type")) {
    if (*type != "request" && *type != "response") {
      throw validation("`input_type` must be \"request\" or \"response\"", "input_type");
    }
    request.input_type = std::move(*type);
  }
  for (const std::string_view name : {"images", "tools", "structured_messages"}) {
    if (const std::optional<element> f = optional_field(obj, name); f && !f->is_array()) {
      throw validation(ticked(name) + " must be a list", std::string(name));
    }
  }
  for (const std::string_view name : {"litellm_call_id", "litellm_trace_id"})
    (void)optional_string(obj, name);
  if (const std::optional<element> f = optional_field(obj, "request_data"); f && !f->is_object()) {
    throw validation("`request_data` must be an object", "request_data");
  }
  constexpr std::string_view kParams = "additional_provider_specific_params";
  if (const std::optional<element> f = optional_field(obj, kParams)) {
    object params;
    if (f->get(params) != simdjson::SUCCESS)
      throw validation(ticked(kParams) + " must be an object", std::string(kParams));
    request.block_on_abstain = bool_or(params, "block_on_abstain", false);
  }
  return request;
}

namespace {

Response guardrail_answer(std::string_view action, std::string_view reason) {
  JsonWriter w;
  w.begin_object();
  w.key("action").value(action);
  if (!reason.empty()) w.key("blocked_reason").value(reason);
  w.end_object();
  return json_response(200, w.take());
}

}  // namespace

void litellm_guardrail(App& app, std::shared_ptr<Call> call, std::string_view body) {
  const GuardrailRequest parsed = parse_litellm_guardrail(body);
  app.tasks.expect_guard();  // no guard: 424, which LiteLLM reports as a failed guardrail call
  serving::tasks::check_batch(parsed.texts.size(), app.tasks.limits(), "texts");
  // Empty texts (a message with only an image) have nothing to judge; the others keep
  // their index for the reason.
  serving::tasks::GuardTexts task;
  task.field.name = "texts";
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < parsed.texts.size(); ++i) {
    if (parsed.texts[i].empty()) continue;
    task.texts.push_back(parsed.texts[i]);
    index.push_back(i);
  }
  if (task.texts.empty()) return app.finish(*call, guardrail_answer("NONE", {}));
  guard_texts(app, std::move(call), std::move(task),
              [index, block_on_abstain = parsed.block_on_abstain,
               type = parsed.input_type](std::vector<guard::GuardResult> verdicts) {
                for (std::size_t k = 0; k < verdicts.size(); ++k) {
                  const guard::GuardResult& v = verdicts[k];
                  if (v.flagged.value_or(false)) {
                    return guardrail_answer(
                        "BLOCKED", fmt::format("Warden's guard flagged the {} text {} as a prompt injection "
                                               "(score {:.3f}, method {})",
                                               type, index[k], v.score.value_or(0.0F), v.method));
                  }
                  if (block_on_abstain && !v.flagged) {
                    return guardrail_answer("BLOCKED",
                                            fmt::format("Warden's guard could not judge the {} text {} and "
                                                        "block_on_abstain is set: {}",
                                                        type, index[k], v.reason));
                  }
                }
                return guardrail_answer("NONE", {});
              });
}

}  // namespace warden::http

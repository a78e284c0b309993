// POST /guard, and the guard every guarding route shares (guard_texts: /guard, LiteLLM's
// guardrail, a rerank's passages): serving/tasks' guard task (the prompt-injection guard of
// src/guard/ behind the server), formatted here.

#include <string>
#include <utility>
#include <vector>

#include "core/json_writer.hpp"
#include "guard/guard.hpp"
#include "http/guard_route.hpp"

namespace warden::http {

// The body.

using namespace body;

GuardRequest parse_guard(std::string_view body) {
  simdjson::dom::parser parser;
  const object obj = parse_object(parser, body);
  GuardRequest request;
  request.inputs = string_or_list(obj, "inputs", request.single);
  request.model = model_field(obj);
  return request;
}

void guard(App& app, std::shared_ptr<Call> call, std::string_view body) {
  GuardRequest request = parse_guard(body);
  serving::tasks::GuardTexts task;
  task.texts = std::move(request.inputs);
  guard_texts(app, std::move(call), std::move(task), [](std::vector<guard::GuardResult> verdicts) {
    JsonWriter w;
    w.begin_array();
    for (const guard::GuardResult& v : verdicts) w.raw(v.to_json());
    w.end_array();
    return json_response(200, w.take());
  });
}

void guard_texts(App& app, std::shared_ptr<Call> call, serving::tasks::GuardTexts task, GuardAnswer format) {
  for (const std::string& text : task.texts) call->characters += code_points(text);
  app.tasks.guard(app.task_context(*call, {}), std::move(task),
                  app.answer<std::vector<guard::GuardResult>>(
                      call, [format = std::move(format)](std::vector<guard::GuardResult>& verdicts) {
                        return format(std::move(verdicts));
                      }));
}

}  // namespace warden::http

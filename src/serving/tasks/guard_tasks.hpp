#pragma once
// The guard's task (Warden's /guard, LiteLLM's guardrail, a rerank's passages): the
// prompt-injection guard's verdict on each text.

#include <string>
#include <vector>

#include "guard/guard.hpp"
#include "serving/tasks/inputs.hpp"

namespace warden::serving::tasks {

struct GuardTexts {
  std::vector<std::string> texts;
  Field field;
  // As /embed: an empty text is refused (Empty). A text of only white space is judged, and
  // the guard abstains on it: neither is ever an attack verdict.
  bool refuse_empty = true;
};

}  // namespace warden::serving::tasks

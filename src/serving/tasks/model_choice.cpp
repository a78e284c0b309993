#include "serving/tasks/model_choice.hpp"

#include <optional>
#include <vector>

#include "serving/model_manager.hpp"

namespace warden::serving::tasks {

ChosenModel choose_model(const ModelManager& models, const ModelChoice& choice,
                         std::initializer_list<ModelKind> kinds, bool strict_names) {
  ChosenModel out;
  if (!choice.exact.empty()) {
    out.name = choice.exact;
    return out;
  }
  if (!choice.requested.empty()) {
    if (strict_names || models.status(choice.requested)) {
      out.name = choice.requested;
      return out;
    }
    out.substituted = choice.requested;
  }
  if (std::optional<std::string> d = models.default_for(kinds)) {
    out.name = *d;
  } else if (const std::vector<std::string> all = models.names(); !all.empty()) {
    out.name = all.front();
  }
  return out;
}

}  // namespace warden::serving::tasks

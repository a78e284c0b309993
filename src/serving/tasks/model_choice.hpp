#pragma once
// Which served model a request runs on — the one rule every transport follows.

#include <initializer_list>
#include <string>

#include "core/model_kind.hpp"

namespace warden::serving {
class ModelManager;
}  // namespace warden::serving

namespace warden::serving::tasks {

struct ModelChoice {
  // A name the request pins (HTTP's /models/{name}/ prefix, gRPC's x-warden-model): taken as
  // it is, unknown or not.
  std::string exact;
  // The body's `model`: taken when a model has that name (or when names are strict);
  // otherwise the task's default answers and `substituted` says so — TEI's and hosted APIs'
  // clients send names such as text-embedding-3-small.
  std::string requested;
};

struct ChosenModel {
  std::string name;         // empty: no model is served
  std::string substituted;  // the requested name the default replaced; empty if none
};

// The model for a task of one of `kinds`: exact, else requested (see above), else the first
// served model of `kinds` in order, else the first model (whose wrong kind the task then
// refuses, naming what it needs).
[[nodiscard]] ChosenModel choose_model(const ModelManager& models, const ModelChoice& choice,
                                       std::initializer_list<ModelKind> kinds, bool strict_names);

}  // namespace warden::serving::tasks

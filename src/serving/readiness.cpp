#include "serving/readiness.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>

namespace warden::serving {

Readiness::Readiness(std::string what) {
  state_.reason = std::move(what);
}

void Readiness::starting(std::string what) {
  const std::lock_guard lock(mutex_);
  if (state_.failed) return;  // a failure stands
  state_.ready = false;
  state_.reason = std::move(what);
}

void Readiness::ready() {
  const std::lock_guard lock(mutex_);
  if (state_.failed) return;
  state_.ready = true;
  state_.reason.clear();
}

void Readiness::failed(std::string why) {
  const std::lock_guard lock(mutex_);
  state_ = {false, true, std::move(why)};
}

Readiness::State Readiness::state() const {
  const std::lock_guard lock(mutex_);
  return state_;
}

Health health(const Readiness* readiness, const ModelManager& models) {
  if (readiness != nullptr) {
    const Readiness::State s = readiness->state();
    if (!s.ready) return {false, s.failed ? s.reason : "starting: " + s.reason};
  }
  const std::vector<ModelStatus> all = models.list();
  std::string failures;
  for (const ModelStatus& m : all) {
    if (m.state != ModelState::Failed) return {};
    failures += fmt::format("{}{}: {}", failures.empty() ? "" : "; ", m.name, m.last_error);
  }
  if (all.empty()) return {false, "no model is served"};
  return {false, "no model can serve: " + failures};
}

}  // namespace warden::serving

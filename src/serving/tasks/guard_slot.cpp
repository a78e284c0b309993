#include "serving/tasks/guard_slot.hpp"

namespace warden::serving::tasks {

void GuardSlot::fill(const guard::Guard* guard) {
  std::vector<Waiter> waiters;
  {
    const std::lock_guard lock(mutex_);
    if (filled_) return;
    filled_ = true;
    guard_ = guard;
    waiters.swap(waiters_);
  }
  // Outside the lock: a waiter may call peek() or when_filled().
  for (Waiter& w : waiters) w(guard);
}

std::optional<const guard::Guard*> GuardSlot::peek() const {
  const std::lock_guard lock(mutex_);
  if (!filled_) return std::nullopt;
  return guard_;
}

void GuardSlot::when_filled(Waiter then) {
  {
    const std::lock_guard lock(mutex_);
    if (!filled_) {
      waiters_.push_back(std::move(then));
      return;
    }
  }
  then(guard_);  // guard_ never changes once filled
}

}  // namespace warden::serving::tasks

#pragma once
// A guard that is fitted while the server already serves. Fitting the probe embeds its bank
// (or checks a cached fit against the embedder): tens of milliseconds from the cache, seconds
// on a first start. The server listens and embeds meanwhile; guard requests that arrive
// before the fit is done wait here and go on when it is.

#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "guard/guard.hpp"

namespace warden::serving::tasks {

class GuardSlot {
 public:
  using Waiter = std::function<void(const guard::Guard*)>;

  // The fit is over: `guard` is the result, null when it failed (no guard: 424). Runs the
  // waiters on this thread, in arrival order. Once only; later calls are ignored.
  void fill(const guard::Guard* guard);
  // The guard once the fit is over (null: there is none); nullopt while it runs.
  [[nodiscard]] std::optional<const guard::Guard*> peek() const;
  // Runs `then` with the result: now (on this thread) when the fit is over, else from fill().
  void when_filled(Waiter then);

 private:
  mutable std::mutex mutex_;
  bool filled_ = false;
  const guard::Guard* guard_ = nullptr;
  std::vector<Waiter> waiters_;
};

}  // namespace warden::serving::tasks

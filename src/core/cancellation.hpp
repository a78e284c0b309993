#pragma once
// A flag that one side sets and the other polls: the server sets it when a client goes
// away before its answer, and queued work that sees it is dropped instead of computed.

#include <atomic>

namespace warden {

class Cancellation {
 public:
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  [[nodiscard]] bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace warden

#include "serving/leases.hpp"

namespace warden::serving {

void Leases::acquire(const std::string& name, ModelManager::Acquired done) {
  models_.acquire(name,
                  [open = hold_open(), done = std::move(done)](LeasePtr lease, std::exception_ptr error) {
                    done(std::move(lease), std::move(error));
                  });
}

std::shared_ptr<void> Leases::hold_open() {
  {
    const std::lock_guard lock(mutex_);
    ++pending_;
  }
  return {nullptr, [this](void*) {
            const std::lock_guard lock(mutex_);
            if (--pending_ == 0) idle_.notify_all();
          }};
}

void Leases::settle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return pending_ == 0; });
}

}  // namespace warden::serving

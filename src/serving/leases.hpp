#pragma once
// Model leases for requests, counted: every transport acquires a request's model here, so
// that shutdown can wait (settle) until no request still waits for a load — the
// continuations of those requests use the workers and the scheduler, which must outlive them.

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "serving/model_manager.hpp"

namespace warden::serving {

class Leases {
 public:
  explicit Leases(ModelManager& models) : models_(models) {}
  ~Leases() { settle(); }
  Leases(const Leases&) = delete;
  Leases& operator=(const Leases&) = delete;

  // ModelManager::acquire, counted until `done` has returned.
  void acquire(const std::string& name, ModelManager::Acquired done);
  // Waits until no acquire waits for a load and no token of hold_open() lives.
  void settle();
  // A token that keeps settle() waiting while it lives: for work that will use the workers
  // or the scheduler later (a model an admin request is loading).
  [[nodiscard]] std::shared_ptr<void> hold_open();

  [[nodiscard]] ModelManager& models() noexcept { return models_; }

 private:
  ModelManager& models_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t pending_ = 0;
};

}  // namespace warden::serving

#pragma once
// Whether the server can serve, for GET /health (readiness; GET /live is liveness): not
// while its models are still loading at start (--preload, --warmup-file) or after a
// self-check failed, nor while every model it serves has failed to load.

#include <mutex>
#include <string>

#include "serving/model_manager.hpp"

namespace warden::serving {

class Readiness {
 public:
  // Not ready yet, doing `what` ("loading models").
  explicit Readiness(std::string what = "starting");

  void starting(std::string what);  // still not ready, now doing `what`
  void ready();
  void failed(std::string why);  // not ready, and will not become so by itself

  struct State {
    bool ready = false;
    bool failed = false;
    std::string reason;  // what it is doing, or why it failed; empty when ready
  };
  [[nodiscard]] State state() const;

 private:
  mutable std::mutex mutex_;
  State state_;
};

struct Health {
  bool ok = true;
  std::string reason;  // why not, for the 503's body
};

// The verdict: the start-up state (null: ready), then the models: a server all of whose
// models failed to load (lazily, after start) cannot answer anything but errors.
Health health(const Readiness* readiness, const ModelManager& models);

}  // namespace warden::serving

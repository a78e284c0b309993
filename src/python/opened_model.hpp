#pragma once
// A model of the Python package, opened as `warden serve --model` opens it (catalog::open_model:
// built-ins, folders, HuggingFace ids through the hub cache, --dtype's names) with a thread pool
// of its own. A model computes one batch at a time: calls from several Python threads take
// turns (turn()), each running on the whole pool.

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "catalog/open_model.hpp"
#include "core/model_kind.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::python {

struct ModelOptions {
  std::string source;  // as --model takes it; empty: the default embedder
  std::string dtype = "float32";
  std::size_t threads = 0;      // 0: the CPUs available
  std::string pooling;          // an embedding folder's pooling overridden (TEI's --pooling)
  std::string rerank_template;  // a causal LM's reranker template
};

class OpenedModel {
 public:
  // Loads the model (call without the GIL: it can take seconds). `what` names the class in
  // errors ("TextEmbedding"). Error(InvalidArgument) when the model is not of `kind`.
  OpenedModel(const ModelOptions& options, ModelKind kind, std::string_view what);
  OpenedModel(const OpenedModel&) = delete;
  OpenedModel& operator=(const OpenedModel&) = delete;
  ~OpenedModel();

  [[nodiscard]] ThreadPool& pool() noexcept { return *pool_; }
  [[nodiscard]] const catalog::OpenModel& opened() const noexcept { return opened_; }
  [[nodiscard]] const std::string& dtype() const noexcept { return dtype_; }
  // Held for a whole call: prepare and compute.
  [[nodiscard]] std::unique_lock<std::mutex> turn() { return std::unique_lock(turn_); }

 private:
  std::unique_ptr<ThreadPool> pool_;  // before the model, which runs on it
  catalog::OpenModel opened_;
  std::string dtype_;
  std::mutex turn_;
};

}  // namespace warden::python

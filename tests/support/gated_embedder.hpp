#pragma once
// The hashing embedder behind a gate, for tests of what happens while the engine is busy:
// embed_prepared() blocks (at most 10 s) until the test calls open().

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "embed/hashing_embedder.hpp"

namespace warden::testing {

class GatedEmbedder final : public embed::Embedder {
 public:
  [[nodiscard]] std::string_view id() const noexcept override { return "gated"; }
  [[nodiscard]] std::size_t dim() const noexcept override { return embed::HashingEmbedder::kDim; }
  [[nodiscard]] bool semantic() const noexcept override { return false; }
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return 0; }
  [[nodiscard]] bool unit_vectors() const noexcept override { return true; }
  [[nodiscard]] embed::PreparedInput prepare(std::string_view text,
                                             const embed::InputOptions& options) const override {
    return inner_.prepare(text, options);
  }
  // The compute stage is the one that blocks.
  void embed_prepared(std::span<const embed::PreparedInput* const> inputs,
                      std::span<float> out) const override {
    std::unique_lock lock(mutex_);
    ++entered_;
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::seconds(10), [this] { return open_; });
    inner_.embed_prepared(inputs, out);
  }
  // True once at least n batches have entered the embedder.
  bool wait_entered(int n = 1) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return entered_ >= n; });
  }
  void open() const {
    const std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  embed::HashingEmbedder inner_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable int entered_ = 0;
  mutable bool open_ = false;
};

}  // namespace warden::testing

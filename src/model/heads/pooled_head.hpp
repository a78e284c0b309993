#pragma once
// The pooled vector: sentence-transformers' Pooling module over the last hidden states (cls,
// mean, max or last token), leaving a prompt's tokens out of mean and max when its config says
// include_prompt = false, then the Dense modules that follow it (model/heads/dense_modules.hpp).
// Not normalised: the embedder normalises.

#include <span>

#include "model/heads/dense_modules.hpp"
#include "model/heads/head.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden::model::heads {

class PooledHead final : public Head {
 public:
  // `hidden`: the encoder's hidden size. `dense`: the Dense modules after the Pooling (viewed: they
  // must outlive the head), the vector's length their last out_features.
  PooledHead(metadata::PoolingConfig config, std::size_t hidden, std::span<const DenseModule> dense = {})
      : config_(config), hidden_(hidden), dense_(dense) {}
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::Dense; }
  [[nodiscard]] std::size_t width() const noexcept override { return dense_modules_width(dense_, hidden_); }
  [[nodiscard]] std::string_view name() const noexcept override {
    return metadata::pooling_mode_name(config_.mode);
  }
  void apply(const HeadPass& pass, HeadResults& out) const override;

 private:
  metadata::PoolingConfig config_;
  std::size_t hidden_;
  std::span<const DenseModule> dense_;
};

}  // namespace warden::model::heads

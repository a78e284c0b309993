#pragma once
// The pooled vector: sentence-transformers' Pooling module over the last hidden states (cls,
// mean, max or last token), leaving a prompt's tokens out of mean and max when its config says
// include_prompt = false. Not normalised: the embedder normalises.

#include "model/heads/head.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden::model::heads {

class PooledHead final : public Head {
 public:
  // `dim`: the encoder's hidden size, the vector's length.
  PooledHead(metadata::PoolingConfig config, std::size_t dim) : config_(config), dim_(dim) {}
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::Dense; }
  [[nodiscard]] std::size_t width() const noexcept override { return dim_; }
  [[nodiscard]] std::string_view name() const noexcept override {
    return metadata::pooling_mode_name(config_.mode);
  }
  void apply(const HeadPass& pass, HeadResults& out) const override;

 private:
  metadata::PoolingConfig config_;
  std::size_t dim_;
};

}  // namespace warden::model::heads

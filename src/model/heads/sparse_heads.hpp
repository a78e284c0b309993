#pragma once
// The Sparse heads: bge-m3's lexical weights (model/retrieval_heads.hpp's LexicalHead, with the
// ids the tokenizer names as never reported) and a SPLADE model's MLM head.

#include <cstdint>
#include <vector>

#include "model/heads/head.hpp"
#include "model/heads/retrieval_heads.hpp"

namespace warden::model::heads {

class LexicalWeightsHead final : public Head {
 public:
  // `skip_ids`: sorted. `vocab`: the encoder's vocabulary.
  LexicalWeightsHead(const LexicalHead& weights, std::vector<std::uint32_t> skip_ids, std::size_t vocab)
      : weights_(weights), skip_ids_(std::move(skip_ids)), vocab_(vocab) {}
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::Sparse; }
  [[nodiscard]] std::size_t width() const noexcept override { return vocab_; }
  [[nodiscard]] std::string_view name() const noexcept override { return "sparse"; }
  void apply(const HeadPass& pass, HeadResults& out) const override;

 private:
  const LexicalHead& weights_;
  std::vector<std::uint32_t> skip_ids_;
  std::size_t vocab_;
};

class SpladeWeightsHead final : public Head {
 public:
  explicit SpladeWeightsHead(const SpladeHead& weights) : weights_(weights) {}
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::Sparse; }
  [[nodiscard]] std::size_t width() const noexcept override { return weights_.vocab(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "splade"; }
  void apply(const HeadPass& pass, HeadResults& out) const override;

 private:
  const SpladeHead& weights_;
};

}  // namespace warden::model::heads

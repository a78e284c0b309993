#pragma once
// Sequence-classification heads of *ForSequenceClassification models. Each takes the first
// token's hidden state (or ModernBERT's mean, with classifier_pooling "mean") through one
// dense layer and an activation (and ModernBERT's LayerNorm), then a projection to the labels:
//   BERT:       pooler.dense + tanh,             then classifier
//   RoBERTa:    classifier.dense + tanh,         then classifier.out_proj
//   DistilBERT: pre_classifier + ReLU,           then classifier
//   ModernBERT: head.dense + gelu + head.norm,   then classifier
//   LLM rerankers (model/lm_score_head.hpp): the last token, no dense layer, then one LM-head row

#include <cstddef>
#include <span>

#include "kernels/activation.hpp"
#include "kernels/gemm.hpp"
#include "model/engine/layer_norm_weights.hpp"
#include "model/heads/head.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::heads {

struct ClassifierHead final : Head {
  metadata::PoolingMode pooling =
      metadata::PoolingMode::Cls;  // which state the head reads: Cls, Mean or LastToken
  kernels::PackedLinear dense;     // empty (n() 0): none, and no activation
  kernels::Activation activation = kernels::Activation::Tanh;
  engine::LayerNormWeights norm;  // after the activation; empty: none
  float norm_eps = 1e-5F;
  kernels::PackedLinear out;

  [[nodiscard]] std::size_t labels() const noexcept { return out.n(); }
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::Scores; }
  [[nodiscard]] std::size_t width() const noexcept override { return labels(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "classifier"; }
  // The logits into results.scores.
  void apply(const HeadPass& pass, HeadResults& results) const override;

  // hidden: [tokens x dim] packed; logits: [S x labels()].
  void logits(std::span<const float> hidden, std::size_t dim, std::span<const std::size_t> offsets,
              std::span<float> logits, ThreadPool* pool = nullptr) const;
};

}  // namespace warden::model::heads

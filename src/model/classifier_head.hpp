#pragma once
// Sequence-classification heads of *ForSequenceClassification models. All three
// architectures take the first token's hidden state through one dense layer and an
// activation, then a projection to the labels:
//   BERT:       pooler.dense + tanh,             then classifier
//   RoBERTa:    classifier.dense + tanh,         then classifier.out_proj
//   DistilBERT: pre_classifier + ReLU,           then classifier

#include <cstddef>
#include <span>

#include "kernels/activation.hpp"
#include "kernels/gemm.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model {

struct ClassifierHead {
  kernels::PackedLinear dense;
  kernels::Activation activation = kernels::Activation::Tanh;
  kernels::PackedLinear out;

  [[nodiscard]] std::size_t labels() const noexcept { return out.n(); }

  // hidden: [tokens x dim] packed; logits: [S x labels()].
  void logits(std::span<const float> hidden, std::size_t dim, std::span<const std::size_t> offsets,
              std::span<float> logits, ThreadPool* pool = nullptr) const;
};

}  // namespace warden::model

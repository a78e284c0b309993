#pragma once
// The MultiVector heads, both a projection of every token (model/retrieval_heads.hpp's
// MultiVectorHead) made unit length:
//  * TokenVectorsHead, bge-m3's colbert_linear: every token after the first (CLS);
//  * ColbertHead, a ColBERT's (PyLate's, Stanford's): every token of a query (its [MASK]
//    expansion included) and a document's every token but those of its skiplist (punctuation).

#include <cstdint>
#include <vector>

#include "model/heads/head.hpp"
#include "model/heads/retrieval_heads.hpp"

namespace warden::model::heads {

class TokenVectorsHead final : public Head {
 public:
  explicit TokenVectorsHead(const MultiVectorHead& weights) : weights_(weights) {}
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::MultiVector; }
  [[nodiscard]] std::size_t width() const noexcept override { return weights_.dim(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "multi-vector"; }
  void apply(const HeadPass& pass, HeadResults& out) const override;

 private:
  const MultiVectorHead& weights_;
};

class ColbertHead final : public Head {
 public:
  // `skiplist`: sorted token ids a document's vectors leave out.
  ColbertHead(const MultiVectorHead& weights, std::vector<std::uint32_t> skiplist)
      : weights_(weights), skiplist_(std::move(skiplist)) {}
  [[nodiscard]] HeadOutput output() const noexcept override { return HeadOutput::MultiVector; }
  [[nodiscard]] std::size_t width() const noexcept override { return weights_.dim(); }
  [[nodiscard]] std::string_view name() const noexcept override { return "colbert"; }
  void apply(const HeadPass& pass, HeadResults& out) const override;

 private:
  const MultiVectorHead& weights_;
  std::vector<std::uint32_t> skiplist_;
};

}  // namespace warden::model::heads

#pragma once
// The heads an embedder runs on each forward pass of its model, and the one place that decides
// them from what the folder ships:
//   a plain embedder    [pooled vector]
//   bge-m3              [pooled vector, lexical weights, token vectors]  (sparse_linear.pt,
//   colbert_linear.pt) SPLADE              [SPLADE weights]                                 (no dense vector)
//   ColBERT             [ColBERT token vectors]                          (no dense vector)
// The heads view the model's weights: the model must outlive them.

#include <cstdint>
#include <memory>
#include <vector>

#include "model/heads/head.hpp"

namespace warden::model {

struct EncoderModel;

// Token ids the heads leave out, which only the tokenizer can name.
struct HeadVocabulary {
  std::vector<std::uint32_t> sparse_skip_ids;   // never in a sparse vector (bge-m3: cls, eos, pad, unk)
  std::vector<std::uint32_t> colbert_skiplist;  // left out of a ColBERT document's vectors
};

using Heads = std::vector<std::unique_ptr<const heads::Head>>;

// The model's heads in the order above; the first is the one that names its pooling.
[[nodiscard]] Heads embedder_heads(const EncoderModel& model, HeadVocabulary vocabulary);

// The first head of `heads` that gives `output`, or null.
[[nodiscard]] const heads::Head* find_head(const Heads& heads, heads::HeadOutput output) noexcept;

}  // namespace warden::model

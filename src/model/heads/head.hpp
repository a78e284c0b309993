#pragma once
// A head turns one forward pass's last hidden states into one kind of output per sequence:
//   Dense        a pooled vector (sentence-transformers' Pooling)
//   Sparse       lexical weights over the vocabulary (bge-m3's sparse_linear, SPLADE's MLM head)
//   MultiVector  unit vectors per token (bge-m3's colbert_linear, a ColBERT's projection)
//   Scores       a classifier's logits (a *ForSequenceClassification head, a yes/no reranker's)
// An embedder holds the list of heads its folder ships (model/embedder_heads.hpp) and runs
// every one on the same pass; a classifier holds its one head. Each head fills only its own
// part of HeadResults.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/embeddings.hpp"
#include "core/sparse_vector.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::engine {
struct TokenBatch;
}  // namespace warden::model::engine

namespace warden::model::heads {

enum class HeadOutput { Dense, Sparse, MultiVector, Scores };

// One forward pass, as the heads read it.
struct HeadPass {
  std::span<const float> hidden;         // [tokens x dim], the sequences packed
  std::size_t dim = 0;                   // the encoder's hidden size
  std::span<const std::uint32_t> ids;    // the packed token ids
  std::span<const std::size_t> offsets;  // S+1 sequence boundaries
  // Per sequence, the leading tokens that came from a prompt (empty: none).
  std::span<const std::size_t> prompt_tokens;
  // Per sequence, 1 for a query and 0 for a document (empty: all documents); ColBERT encodes
  // them differently.
  std::span<const std::uint8_t> queries;
  ThreadPool* pool = nullptr;

  [[nodiscard]] std::size_t sequences() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
};

// What the heads of one pass give, one entry per sequence in each part a head fills.
struct HeadResults {
  std::span<float> dense;            // S x the Dense head's width(), written in place
  std::vector<SparseVector> sparse;  // filled by a Sparse head
  std::vector<Embeddings> multi;     // filled by a MultiVector head
  std::span<float> scores;           // S x the Scores head's width(), written in place
};

class Head {
 public:
  Head() = default;
  Head(const Head&) = default;
  Head(Head&&) = default;
  Head& operator=(const Head&) = default;
  Head& operator=(Head&&) = default;
  virtual ~Head() = default;

  [[nodiscard]] virtual HeadOutput output() const noexcept = 0;
  // Dense: the vector's length; Sparse: the vocabulary; MultiVector: each token vector's length;
  // Scores: the labels.
  [[nodiscard]] virtual std::size_t width() const noexcept = 0;
  // The name TEI's /info gives the model's pooling when this head is its first ("cls", "mean",
  // "splade", "colbert", ...).
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  // Fills this head's part of `out` for every sequence of `pass`. A Dense or Scores head's span
  // must hold S x width() floats (Error(Internal) otherwise).
  virtual void apply(const HeadPass& pass, HeadResults& out) const = 0;
};

// The pass over `batch`'s last hidden states `hidden` ([tokens x dim]): no prompts, all documents.
[[nodiscard]] HeadPass head_pass(const engine::TokenBatch& batch, std::span<const float> hidden,
                                 std::size_t dim, ThreadPool* pool) noexcept;

}  // namespace warden::model::heads

#pragma once
// Internal to the embed layer: per-token output rows of a packed batch, cut into one
// tokens x dim matrix per sequence (what embed_tokens() returns).

#include <algorithm>
#include <span>
#include <vector>

#include "embed/embedder.hpp"
#include "model/engine/token_batch.hpp"

namespace warden::embed::detail {

inline std::vector<Embeddings> split_token_rows(std::span<const float> states,
                                                const model::engine::TokenBatch& batch, std::size_t dim) {
  std::vector<Embeddings> result;
  result.reserve(batch.sequences());
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    Embeddings& e = result.emplace_back(batch.length(s), dim);
    std::copy_n(states.data() + batch.offsets[s] * dim, batch.length(s) * dim, e.values().data());
  }
  return result;
}

}  // namespace warden::embed::detail

#pragma once
// How a query's retrieval outputs score a document's, as the upstream rerankers compute it:
//  * max_sim: ColBERT's late interaction (PyLate's colbert_scores): for each query vector the
//    largest dot product with a document vector, summed over the query's vectors.
//  * sparse_dot: FlagEmbedding's lexical matching score: the products of the weights of the ids
//    both vectors have, summed.
//  * weighted_score: bge-m3's compute_score "colbert+sparse+dense": (w_dense·dense +
//    w_sparse·sparse + w_multi·colbert) / (w_dense + w_sparse + w_multi), where dense is the dot
//    product of the unit dense vectors and colbert is max_sim over the query's vector count.

#include "core/sparse_vector.hpp"
#include "embed/embedder.hpp"

namespace warden::embed {

[[nodiscard]] float max_sim(const Embeddings& query, const Embeddings& document) noexcept;
// Both vectors' ids ascending.
[[nodiscard]] float sparse_dot(const SparseVector& a, const SparseVector& b) noexcept;

struct RetrievalWeights {
  float dense = 1.0F;  // FlagEmbedding's default weights_for_different_modes: [1, 1, 1]
  float sparse = 1.0F;
  float multi = 1.0F;
};
// Outputs with weight zero are not read (they may be empty); dense vectors are normalised here.
[[nodiscard]] float weighted_score(const RetrievalVectors& query, const RetrievalVectors& document,
                                   const RetrievalWeights& weights);

}  // namespace warden::embed

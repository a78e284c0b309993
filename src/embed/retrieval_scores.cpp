#include "embed/retrieval_scores.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace warden::embed {

namespace {

float dot(std::span<const float> a, std::span<const float> b) noexcept {
  float s = 0.0F;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

float max_sim(const Embeddings& query, const Embeddings& document) noexcept {
  if (document.rows() == 0 || query.dim() != document.dim()) return 0.0F;
  float total = 0.0F;
  for (std::size_t q = 0; q < query.rows(); ++q) {
    float best = -std::numeric_limits<float>::infinity();
    for (std::size_t d = 0; d < document.rows(); ++d)
      best = std::max(best, dot(query.row(q), document.row(d)));
    total += best;
  }
  return total;
}

float sparse_dot(const SparseVector& a, const SparseVector& b) noexcept {
  float s = 0.0F;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a.indices[i] < b.indices[j]) {
      ++i;
    } else if (b.indices[j] < a.indices[i]) {
      ++j;
    } else {
      s += a.values[i++] * b.values[j++];
    }
  }
  return s;
}

float weighted_score(const RetrievalVectors& query, const RetrievalVectors& document,
                     const RetrievalWeights& weights) {
  float score = 0.0F;
  if (weights.dense != 0.0F) {
    const float norms =
        std::sqrt(dot(query.dense, query.dense)) * std::sqrt(dot(document.dense, document.dense));
    const float cosine = norms > 0.0F && query.dense.size() == document.dense.size()
                             ? dot(query.dense, document.dense) / norms
                             : 0.0F;
    score += weights.dense * cosine;
  }
  if (weights.sparse != 0.0F) score += weights.sparse * sparse_dot(query.sparse, document.sparse);
  if (weights.multi != 0.0F && query.multi.rows() > 0) {
    score += weights.multi * max_sim(query.multi, document.multi) / static_cast<float>(query.multi.rows());
  }
  return score / (weights.dense + weights.sparse + weights.multi);
}

}  // namespace warden::embed

#include "guard/exemplar_similarity.hpp"

#include <algorithm>
#include <functional>

#include "core/error.hpp"

namespace warden::guard {

ExemplarIndex::ExemplarIndex(std::span<const float> rows, std::size_t n, std::size_t dim)
    : n_(n), dim_(dim), packed_(rows, n, dim, {}) {
  if (rows.size() != n * dim) throw Error(ErrorKind::Internal, "guard: exemplar rows of the wrong size");
}

void ExemplarIndex::similarities(std::span<const float> rows, std::size_t m, std::span<float> out) const {
  if (rows.size() != m * dim_ || out.size() != m * n_) {
    throw Error(ErrorKind::Internal, "guard: similarity buffers of the wrong size");
  }
  if (n_ == 0 || m == 0) return;
  kernels::linear(rows.data(), dim_, m, packed_, out.data(), n_);
}

SimilarityFeatures similarity_features(std::span<const float> similarities, const std::vector<bool>& attack,
                                       const std::function<bool(std::size_t)>& counts) {
  // The kNeighbours largest of each class, kept sorted (descending) by insertion.
  std::array<std::array<float, kNeighbours>, 2> top{};
  std::array<std::size_t, 2> found{};
  for (std::size_t j = 0; j < similarities.size(); ++j) {
    if (counts && !counts(j)) continue;
    const std::size_t c = attack[j] ? 0 : 1;
    const float s = similarities[j];
    std::size_t k = std::min(found[c], kNeighbours);
    if (k == kNeighbours && s <= top[c][k - 1]) continue;
    if (k == kNeighbours) --k;
    while (k > 0 && top[c][k - 1] < s) {
      top[c][k] = top[c][k - 1];
      --k;
    }
    top[c][k] = s;
    ++found[c];
  }
  SimilarityFeatures f{};
  for (std::size_t c = 0; c < 2; ++c) {
    const std::size_t k = std::min(found[c], kNeighbours);
    float sum = 0.0F;
    for (std::size_t i = 0; i < k; ++i) sum += top[c][i];
    f[2 * c] = k > 0 ? top[c][0] : -1.0F;
    f[2 * c + 1] = k > 0 ? sum / static_cast<float>(k) : -1.0F;
  }
  return f;
}

}  // namespace warden::guard

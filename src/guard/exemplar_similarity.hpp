#pragma once
// The exemplar similarity the probe reads beside a window's vector (the few-shot half of the
// guard): how close the window lies to its nearest train attacks and to its nearest benign
// train texts. A linear probe on the vector alone draws one hyperplane through the embedding
// space; with these four numbers it can also say "this is near known attacks" and "this is
// near ordinary text": texts far from every attack exemplar are not flagged on the
// hyperplane's word alone, and a paraphrase of a known attack is caught although it lies on
// the benign side of the plane.

#include <array>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "kernels/gemm.hpp"

namespace warden::guard {

// The features: the largest cosine with an attack exemplar, the mean of the kNeighbours
// largest; the same for benign exemplars. -1 where a class has no exemplar to compare with.
inline constexpr std::size_t kSimilarityFeatures = 4;
inline constexpr std::size_t kNeighbours = 5;
using SimilarityFeatures = std::array<float, kSimilarityFeatures>;

// The exemplars' unit vectors, packed once for the dense kernel: the cosines of a batch of
// windows with all of them are one matrix product.
class ExemplarIndex {
 public:
  ExemplarIndex() = default;
  // rows: n x dim unit vectors.
  ExemplarIndex(std::span<const float> rows, std::size_t n, std::size_t dim);

  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  // out[i * size() + j] = rows[i] · exemplar j, for m unit rows (m x dim).
  void similarities(std::span<const float> rows, std::size_t m, std::span<float> out) const;

 private:
  std::size_t n_ = 0;
  std::size_t dim_ = 0;
  kernels::PackedLinear packed_;
};

// The features of one row of similarities (one per exemplar), counting only the exemplars
// `counts(j)` allows (all when it is empty): a fit leaves out a text's own windows and, in
// its folds, the held-out ones.
SimilarityFeatures similarity_features(std::span<const float> similarities, const std::vector<bool>& attack,
                                       const std::function<bool(std::size_t)>& counts = {});

}  // namespace warden::guard

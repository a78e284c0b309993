#include "guard/classification_metrics.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.hpp"

namespace warden::guard {

BinaryMetrics binary_metrics(const std::vector<bool>& truth, const std::vector<bool>& predicted) {
  if (truth.size() != predicted.size()) throw Error(ErrorKind::Internal, "binary_metrics: length mismatch");
  BinaryMetrics m;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (truth[i]) {
      ++(predicted[i] ? m.true_positives : m.false_negatives);
    } else {
      ++(predicted[i] ? m.false_positives : m.true_negatives);
    }
  }
  const auto ratio = [](std::size_t a, std::size_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / b; };
  m.precision = ratio(m.true_positives, m.true_positives + m.false_positives);
  m.recall = ratio(m.true_positives, m.true_positives + m.false_negatives);
  m.f1 = m.precision + m.recall == 0.0 ? 0.0 : 2.0 * m.precision * m.recall / (m.precision + m.recall);
  return m;
}

std::optional<double> roc_auc(std::span<const double> scores, const std::vector<bool>& truth) {
  if (truth.size() != scores.size()) throw Error(ErrorKind::Internal, "roc_auc: length mismatch");
  // Mann-Whitney U with average ranks for ties.
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  std::vector<double> rank(scores.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && scores[order[j + 1]] == scores[order[i]]) ++j;
    const double average = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = average;
    i = j + 1;
  }
  double positives = 0, negatives = 0, rank_sum = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (truth[i]) {
      ++positives;
      rank_sum += rank[i];
    } else {
      ++negatives;
    }
  }
  if (positives == 0 || negatives == 0) return std::nullopt;
  return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives);
}

}  // namespace warden::guard

#pragma once
// Binary classification metrics for guard-eval, with the conventions of scikit-learn:
// precision / recall are 0 when their denominator is 0, and ROC AUC counts a tie between
// an attack's and a benign text's score as half a correct ordering.

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace warden::guard {

struct BinaryMetrics {
  std::size_t true_positives = 0;
  std::size_t false_positives = 0;
  std::size_t true_negatives = 0;
  std::size_t false_negatives = 0;
  double precision = 0.0;
  double recall = 0.0;
  double f1 = 0.0;
};

// truth and predicted have the same length (attack = true).
BinaryMetrics binary_metrics(const std::vector<bool>& truth, const std::vector<bool>& predicted);

// The probability that a random attack scores above a random benign text; nullopt when
// either class is missing.
std::optional<double> roc_auc(std::span<const double> scores, const std::vector<bool>& truth);

}  // namespace warden::guard

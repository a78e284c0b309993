#pragma once
// `warden guard-eval`: a guard's decisions on labelled entries, as precision / recall / F1
// at its threshold and ROC AUC of its scores, next to the nearest-exemplar cosine rule on
// the same embeddings. Abstentions are counted apart and left out of every metric.

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "guard/bank.hpp"
#include "guard/classification_metrics.hpp"
#include "guard/guard.hpp"

namespace warden::guard {

// Per category of the labelled entries: how many, how many flagged, how many abstained.
struct CategoryCounts {
  std::size_t total = 0;
  std::size_t attacks = 0;
  std::size_t flagged = 0;
  std::size_t abstained = 0;
};

struct EvalReport {
  std::string embedder;          // the embedder's id, or the classifier's
  std::string method = "probe";  // "probe" | "classifier": names the metrics' keys in to_json
  bool semantic = false;
  std::size_t total = 0;
  std::size_t abstained = 0;
  std::size_t evaluated = 0;  // total - abstained
  std::size_t attacks = 0;    // attacks among the evaluated
  float threshold = 0.5F;
  double l2 = 0.0;                                   // the probe's penalty (0 when nothing was fitted)
  std::optional<BinaryMetrics> probe;                // the method's; empty when nothing was evaluated
  std::optional<double> probe_auc;                   // empty when a class is missing
  std::optional<BinaryMetrics> nearest;              // the nearest-exemplar baseline (probe only)
  std::map<std::string, CategoryCounts> categories;  // by BankEntry::category ("" when absent)

  // One JSON object (pretty when indent >= 0).
  [[nodiscard]] std::string to_json(int indent = -1) const;
};

EvalReport evaluate(const Guard& guard, std::span<const BankEntry> labelled);

}  // namespace warden::guard

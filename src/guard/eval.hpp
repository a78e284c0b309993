#pragma once
// `warden guard-eval`: a guard's decisions on labelled entries (as decide_texts makes them:
// canonical text, windows), as precision / recall / F1 and false-positive rate at its
// threshold, recall at 1% and 0.1% false-positive rate, ROC AUC, the share flagged per
// category, abstentions by reason and the time per input, next to the nearest-exemplar
// cosine rule. Abstentions are counted apart and left out of every metric.

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

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
  // The recall at the threshold that flags 1% (0.1%) of this set's benign texts.
  std::optional<double> recall_at_1pct_fpr;
  std::optional<double> recall_at_01pct_fpr;
  std::map<std::string, std::size_t> abstained_by_reason;
  double ms_per_input = 0.0;  // wall time of the decisions (canonicalisation, windows, model), per input

  // One JSON object (pretty when indent >= 0).
  [[nodiscard]] std::string to_json(int indent = -1) const;
};

// With `verdicts`, each entry's verdict too, in order (guard-eval --scores: the score
// distributions per category, and a peer's figures computed on the same texts).
EvalReport evaluate(const Guard& guard, std::span<const BankEntry> labelled,
                    std::vector<GuardResult>* verdicts = nullptr);

}  // namespace warden::guard

#include "guard/eval.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/l2_normalize.hpp"

namespace warden::guard {

namespace {

void write_metrics(JsonWriter& w, const std::optional<BinaryMetrics>& m) {
  if (!m) {
    w.value(nullptr);
    return;
  }
  w.begin_object();
  w.key("precision").value(m->precision);
  w.key("recall").value(m->recall);
  w.key("f1").value(m->f1);
  w.key("true_positives").value(static_cast<std::uint64_t>(m->true_positives));
  w.key("false_positives").value(static_cast<std::uint64_t>(m->false_positives));
  w.key("true_negatives").value(static_cast<std::uint64_t>(m->true_negatives));
  w.key("false_negatives").value(static_cast<std::uint64_t>(m->false_negatives));
  w.end_object();
}

}  // namespace

std::string EvalReport::to_json(int indent) const {
  JsonWriter w(JsonWriter::Options{.indent = indent});
  w.begin_object();
  w.key("embedder").value(embedder);
  w.key("method").value(method);
  w.key("semantic").value(semantic);
  w.key("total").value(static_cast<std::uint64_t>(total));
  w.key("abstained").value(static_cast<std::uint64_t>(abstained));
  w.key("evaluated").value(static_cast<std::uint64_t>(evaluated));
  w.key("attacks").value(static_cast<std::uint64_t>(attacks));
  w.key("threshold").value(threshold);
  if (method == "probe") w.key("l2").value(l2);
  // The metrics are named after the method that produced them ("probe" or "classifier").
  w.key(method);
  write_metrics(w, probe);
  w.key(method + "_roc_auc");
  probe_auc ? w.value(*probe_auc) : w.value(nullptr);
  w.key("recall_at_1pct_fpr");
  recall_at_1pct_fpr ? w.value(*recall_at_1pct_fpr) : w.value(nullptr);
  w.key("recall_at_0.1pct_fpr");
  recall_at_01pct_fpr ? w.value(*recall_at_01pct_fpr) : w.value(nullptr);
  if (probe) {
    const double benign = static_cast<double>(probe->false_positives + probe->true_negatives);
    w.key("false_positive_rate")
        .value(benign > 0 ? static_cast<double>(probe->false_positives) / benign : 0.0);
  }
  w.key("ms_per_input").value(ms_per_input);
  w.key("abstained_by_reason").begin_object();
  for (const auto& [why, n] : abstained_by_reason) w.key(why).value(static_cast<std::uint64_t>(n));
  w.end_object();
  w.key("nearest_exemplar");
  write_metrics(w, nearest);
  if (method == "classifier") {
    w.key("nearest_exemplar_note").value("no cosine baseline: the classifier method embeds nothing");
  }
  w.key("categories").begin_object();
  for (const auto& [name, c] : categories) {
    w.key(name).begin_object();
    w.key("total").value(static_cast<std::uint64_t>(c.total));
    w.key("attacks").value(static_cast<std::uint64_t>(c.attacks));
    w.key("flagged").value(static_cast<std::uint64_t>(c.flagged));
    w.key("abstained").value(static_cast<std::uint64_t>(c.abstained));
    // The share flagged among those judged: recall for attacks, false-positive rate for benign texts.
    const std::size_t judged = c.total - c.abstained;
    w.key("flagged_rate")
        .value(judged > 0 ? static_cast<double>(c.flagged) / static_cast<double>(judged) : 0.0);
    w.end_object();
  }
  w.end_object();
  w.end_object();
  return w.take();
}

namespace {

// The recall at the threshold that flags at most `fpr` of the benign texts of this very set
// (the ROC curve's operating point): what the scores can do, whatever threshold is set.
double recall_at_fpr(std::span<const double> scores, const std::vector<bool>& truth, double fpr) {
  std::vector<double> benign;
  std::size_t attacks = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (truth[i]) {
      ++attacks;
    } else {
      benign.push_back(scores[i]);
    }
  }
  if (attacks == 0 || benign.empty()) return 0.0;
  std::sort(benign.begin(), benign.end(), std::greater<>());
  const auto allowed = static_cast<std::size_t>(std::floor(fpr * static_cast<double>(benign.size())));
  // Flagged: a score strictly above the first benign score that must not be flagged.
  const double bar = allowed < benign.size() ? benign[allowed] : -1.0;
  std::size_t found = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) found += truth[i] && scores[i] > bar ? 1 : 0;
  return static_cast<double>(found) / static_cast<double>(attacks);
}

}  // namespace

EvalReport evaluate(const Guard& guard, std::span<const BankEntry> labelled,
                    std::vector<GuardResult>* verdicts) {
  EvalReport report;
  report.method = guard.classifier() != nullptr ? "classifier" : "probe";
  report.embedder =
      std::string(guard.classifier() != nullptr ? guard.classifier()->id() : guard.embedder()->id());
  report.semantic = guard.classifier() != nullptr || guard.embedder()->semantic();
  report.total = labelled.size();
  report.threshold = guard.threshold();
  report.l2 = guard.classifier() != nullptr ? 0.0 : guard.probe_info().l2;
  std::vector<bool> truth, predicted, nearest;
  std::vector<double> scores;
  const bool baseline = guard.classifier() == nullptr && !guard.abstains_always();
  const auto start = std::chrono::steady_clock::now();
  double baseline_seconds = 0.0;
  constexpr std::size_t kChunk = 64;
  for (std::size_t begin = 0; begin < labelled.size(); begin += kChunk) {
    const std::size_t end = std::min(labelled.size(), begin + kChunk);
    std::vector<std::string_view> texts;
    for (std::size_t i = begin; i < end; ++i) texts.push_back(labelled[i].text);
    const std::vector<GuardResult> results = guard.decide_texts(texts);
    if (verdicts != nullptr) verdicts->insert(verdicts->end(), results.begin(), results.end());
    // The nearest-exemplar baseline reads what the guard reads first: the canonical text's
    // first window (timed apart: it is no part of a decision).
    const auto baseline_start = std::chrono::steady_clock::now();
    std::vector<std::string> firsts;
    if (baseline) {
      for (const std::string_view t : texts) {
        const GuardPlan p = guard.plan(t);
        firsts.emplace_back(p.part(0));
      }
    }
    std::vector<std::string_view> first_views(firsts.begin(), firsts.end());
    const Embeddings rows = baseline ? guard.embedder()->embed(first_views) : Embeddings();
    baseline_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - baseline_start).count();
    for (std::size_t k = 0; k < texts.size(); ++k) {
      const BankEntry& e = labelled[begin + k];
      CategoryCounts& c = report.categories[e.category];
      ++c.total;
      c.attacks += e.attack ? 1 : 0;
      const GuardResult& r = results[k];
      if (!r.flagged) {
        ++report.abstained;
        ++c.abstained;
        ++report.abstained_by_reason[r.reason];
        continue;
      }
      c.flagged += *r.flagged ? 1 : 0;
      truth.push_back(e.attack);
      predicted.push_back(*r.flagged);
      scores.push_back(static_cast<double>(*r.score));
      if (baseline) {
        std::vector<float> unit(rows.row(k).begin(), rows.row(k).end());
        l2_normalize(unit, unit.size());
        nearest.push_back(guard.nearest_is_attack(unit));
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - baseline_seconds;
  report.ms_per_input = labelled.empty() ? 0.0 : 1000.0 * seconds / static_cast<double>(labelled.size());
  report.evaluated = truth.size();
  report.attacks = static_cast<std::size_t>(std::count(truth.begin(), truth.end(), true));
  if (!truth.empty()) {
    report.probe = binary_metrics(truth, predicted);
    report.probe_auc = roc_auc(scores, truth);
    report.recall_at_1pct_fpr = recall_at_fpr(scores, truth, 0.01);
    report.recall_at_01pct_fpr = recall_at_fpr(scores, truth, 0.001);
    if (baseline) report.nearest = binary_metrics(truth, nearest);
  }
  return report;
}

}  // namespace warden::guard

#include "guard/eval.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"

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
    w.end_object();
  }
  w.end_object();
  w.end_object();
  return w.take();
}

namespace {

// The classifier method: decide_texts() classifies in batches; there are no embeddings, so
// no nearest-exemplar baseline.
EvalReport evaluate_classifier(const Guard& guard, std::span<const BankEntry> labelled) {
  EvalReport report;
  report.method = "classifier";
  report.embedder = std::string(guard.classifier()->id());
  report.semantic = true;
  report.total = labelled.size();
  report.threshold = guard.threshold();
  std::vector<std::string_view> texts;
  texts.reserve(labelled.size());
  for (const BankEntry& e : labelled) texts.push_back(e.text);
  const std::vector<GuardResult> results = guard.decide_texts(texts);
  std::vector<bool> truth, predicted;
  std::vector<double> scores;
  for (std::size_t i = 0; i < labelled.size(); ++i) {
    CategoryCounts& c = report.categories[labelled[i].category];
    ++c.total;
    c.attacks += labelled[i].attack ? 1 : 0;
    const GuardResult& r = results[i];
    if (!r.flagged) {
      ++report.abstained;
      ++c.abstained;
      continue;
    }
    c.flagged += *r.flagged ? 1 : 0;
    truth.push_back(labelled[i].attack);
    predicted.push_back(*r.flagged);
    scores.push_back(static_cast<double>(*r.score));
  }
  report.evaluated = truth.size();
  report.attacks = static_cast<std::size_t>(std::count(truth.begin(), truth.end(), true));
  if (!truth.empty()) {
    report.probe = binary_metrics(truth, predicted);
    report.probe_auc = roc_auc(scores, truth);
  }
  return report;
}

}  // namespace

EvalReport evaluate(const Guard& guard, std::span<const BankEntry> labelled) {
  if (guard.classifier() != nullptr) return evaluate_classifier(guard, labelled);
  const Embedder& embedder = *guard.embedder();
  EvalReport report;
  report.embedder = std::string(embedder.id());
  report.semantic = embedder.semantic();
  report.total = labelled.size();
  report.threshold = guard.threshold();
  report.l2 = guard.probe_info().l2;
  std::vector<bool> truth, predicted, nearest;
  std::vector<double> scores;
  constexpr std::size_t kChunk = 64;
  for (std::size_t begin = 0; begin < labelled.size(); begin += kChunk) {
    const std::size_t end = std::min(labelled.size(), begin + kChunk);
    std::vector<std::string_view> texts;
    for (std::size_t i = begin; i < end; ++i) texts.push_back(labelled[i].text);
    for (std::size_t i = begin; i < end; ++i) {
      CategoryCounts& c = report.categories[labelled[i].category];
      ++c.total;
      c.attacks += labelled[i].attack ? 1 : 0;
    }
    if (guard.abstains_always()) {
      report.abstained += texts.size();
      for (std::size_t i = begin; i < end; ++i) ++report.categories[labelled[i].category].abstained;
      continue;
    }
    const Embeddings rows = embedder.embed(texts);  // unit rows
    for (std::size_t k = 0; k < texts.size(); ++k) {
      const PreparedInput prepared = embedder.prepare(texts[k], InputOptions{});
      const GuardResult r = guard.decide(rows.row(k), prepared, texts[k]);
      CategoryCounts& c = report.categories[labelled[begin + k].category];
      if (!r.flagged) {
        ++report.abstained;
        ++c.abstained;
        continue;
      }
      c.flagged += *r.flagged ? 1 : 0;
      const bool attack = labelled[begin + k].attack;
      truth.push_back(attack);
      predicted.push_back(*r.flagged);
      scores.push_back(static_cast<double>(*r.score));
      nearest.push_back(guard.nearest_is_attack(rows.row(k)));
    }
  }
  report.evaluated = truth.size();
  report.attacks = static_cast<std::size_t>(std::count(truth.begin(), truth.end(), true));
  if (!truth.empty()) {
    report.probe = binary_metrics(truth, predicted);
    report.probe_auc = roc_auc(scores, truth);
    report.nearest = binary_metrics(truth, nearest);
  }
  return report;
}

}  // namespace warden::guard

#include "bulk/scorers.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::bulk {

void EmbedScorer::prepare(const Record& record, std::span<PreparedInput> out) const {
  out[0] = embedder_.prepare(record.text, InputOptions{});
}

void EmbedScorer::compute(std::span<const PreparedInput* const> inputs, std::span<float> out) const {
  embedder_.embed_prepared(inputs, out);
}

void EmbedScorer::finish(std::span<float> row) const {
  embedder_.normalize_rows(row);
}

RerankScorer::RerankScorer(const SequenceClassifier& classifier, std::vector<std::string> queries, bool raw)
    : classifier_(classifier), queries_(std::move(queries)), raw_(raw) {
  if (classifier_.labels().size() != 1) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} has {} labels: reranking needs a one-label cross-encoder", classifier_.id(),
                            classifier_.labels().size()));
  }
}

void RerankScorer::prepare(const Record& record, std::span<PreparedInput> out) const {
  if (queries_.empty()) {
    out[0] = classifier_.prepare(record.pair, record.text, InputOptions{});
    return;
  }
  for (std::size_t q = 0; q < queries_.size(); ++q)
    out[q] = classifier_.prepare(queries_[q], record.text, InputOptions{});
}

void RerankScorer::compute(std::span<const PreparedInput* const> inputs, std::span<float> out) const {
  classifier_.classify_prepared(inputs, out);
}

void RerankScorer::finish(std::span<float> row) const {
  if (raw_) return;
  for (float& s : row) s = sigmoid(s);
}

}  // namespace warden::bulk

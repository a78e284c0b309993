#include "bulk/scorers.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::bulk {

void EmbedScorer::prepare(const Record& record, std::span<embed::PreparedInput> out) const {
  out[0] = embedder_.prepare(record.text, options_);
}

void EmbedScorer::compute(std::span<const embed::PreparedInput* const> inputs, std::span<float> out) const {
  embedder_.embed_prepared(inputs, out);
}

void EmbedScorer::finish(std::span<float> row) const {
  embedder_.normalize_rows(row);
}

RetrievalScorer::RetrievalScorer(const embed::Embedder& embedder, RetrievalKind kind, bool query)
    : embedder_(embedder), kind_(kind), query_(query) {
  const embed::RetrievalOutputs has = embedder_.retrieval_outputs();
  if ((kind_ == RetrievalKind::Sparse && !has.sparse) || (kind_ == RetrievalKind::Multi && !has.multi)) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{} has no {} output (it gives{}{}{})", embedder_.id(),
                    kind_ == RetrievalKind::Sparse ? "sparse" : "multi-vector", has.dense ? " dense" : "",
                    has.sparse ? " sparse" : "", has.multi ? " multi" : ""));
  }
}

void RetrievalScorer::prepare(const Record& record, std::span<embed::PreparedInput> out) const {
  embed::InputOptions o;
  o.query = query_;
  out[0] = embedder_.prepare(record.text, o);
}

void RetrievalScorer::compute(std::span<const embed::PreparedInput* const>, std::span<float>) const {
  throw Error(ErrorKind::Internal, "RetrievalScorer gives its outputs through compute_outputs");
}

void RetrievalScorer::finish(std::span<float>) const {}

std::vector<embed::RetrievalVectors> RetrievalScorer::compute_outputs(
    std::span<const embed::PreparedInput* const> inputs) const {
  std::vector<embed::RetrievalVectors> out = embedder_.embed_retrieval(inputs);
  for (embed::RetrievalVectors& v : out) {  // keep what is written; a chunk holds its records' outputs
    v.dense = {};
    if (kind_ == RetrievalKind::Sparse) v.multi = {};
    if (kind_ == RetrievalKind::Multi) v.sparse = {};
  }
  return out;
}

RerankScorer::RerankScorer(const classify::SequenceClassifier& classifier, std::vector<std::string> queries,
                           bool raw, std::string instruction)
    : classifier_(classifier), queries_(std::move(queries)), raw_(raw), instruction_(std::move(instruction)) {
  if (!instruction_.empty() && !classifier_.takes_instruction()) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("--instruction is for yes/no rerankers (Qwen3-Reranker); {} takes none",
                            classifier_.id()));
  }
  if (classifier_.labels().size() != 1) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} has {} labels: reranking needs a one-label cross-encoder", classifier_.id(),
                            classifier_.labels().size()));
  }
}

void RerankScorer::prepare(const Record& record, std::span<embed::PreparedInput> out) const {
  embed::InputOptions options;
  options.prompt = instruction_;
  if (queries_.empty()) {
    out[0] = classifier_.prepare(record.pair, record.text, options);
    return;
  }
  for (std::size_t q = 0; q < queries_.size(); ++q)
    out[q] = classifier_.prepare(queries_[q], record.text, options);
}

void RerankScorer::compute(std::span<const embed::PreparedInput* const> inputs, std::span<float> out) const {
  classifier_.classify_prepared(inputs, out);
}

void RerankScorer::finish(std::span<float> row) const {
  if (raw_) return;
  for (float& s : row) s = classify::sigmoid(s);
}

}  // namespace warden::bulk

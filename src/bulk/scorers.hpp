#pragma once
// The Scorers of the bulk commands: embeddings (warden embed --input) and reranker scores
// (warden rerank). Both give exactly what their one-shot counterparts give: an embedding
// row equals Embedder::embed's, a score equals /rerank's.

#include <string>
#include <vector>

#include "bulk/job.hpp"
#include "classify/sequence_classifier.hpp"
#include "embed/embedder.hpp"

namespace warden::bulk {

// One unit vector per record (Embedder::embed's prepare, embed_prepared and normalisation).
class EmbedScorer final : public Scorer {
 public:
  // `options`: the prompt and task adapter every record is encoded with (views into the embedder).
  explicit EmbedScorer(const embed::Embedder& embedder, embed::InputOptions options = {})
      : embedder_(embedder), options_(options) {}
  [[nodiscard]] std::size_t units_per_record() const noexcept override { return 1; }
  [[nodiscard]] std::size_t unit_width() const noexcept override { return embedder_.dim(); }
  void prepare(const Record& record, std::span<embed::PreparedInput> out) const override;
  void compute(std::span<const embed::PreparedInput* const> inputs, std::span<float> out) const override;
  void finish(std::span<float> row) const override;

 private:
  const embed::Embedder& embedder_;
  embed::InputOptions options_;
};

// What a retrieval job writes per record: a sparse vector or token vectors.
enum class RetrievalKind { Sparse, Multi };

// The sparse vector (bge-m3's lexical weights, SPLADE's) or the token vectors (ColBERT's) of
// each record, as /embed_hybrid gives them; `query`: encode the records as queries (ColBERT).
// Error(Unsupported) naming what the model gives when it has no such output.
class RetrievalScorer final : public Scorer {
 public:
  RetrievalScorer(const embed::Embedder& embedder, RetrievalKind kind, bool query);
  [[nodiscard]] std::size_t units_per_record() const noexcept override { return 1; }
  [[nodiscard]] std::size_t unit_width() const noexcept override { return 0; }
  void prepare(const Record& record, std::span<embed::PreparedInput> out) const override;
  void compute(std::span<const embed::PreparedInput* const> inputs, std::span<float> out) const override;
  void finish(std::span<float> row) const override;
  [[nodiscard]] bool variable_outputs() const noexcept override { return true; }
  [[nodiscard]] std::vector<embed::RetrievalVectors> compute_outputs(
      std::span<const embed::PreparedInput* const> inputs) const override;

 private:
  const embed::Embedder& embedder_;
  RetrievalKind kind_;
  bool query_;
};

// Relevance of (query, passage) pairs to a one-label cross-encoder: the sigmoid of its
// logit (TEI's /rerank) or, with raw, the logit. The passage is the record's text; the
// query is the record's pair text when `queries` is empty, else each of `queries` in turn.
class RerankScorer final : public Scorer {
 public:
  // Error(Unsupported) unless the classifier has exactly one label. `instruction`: a yes/no
  // reranker's task instruction (empty: its default); Error(InvalidArgument) for another model.
  RerankScorer(const classify::SequenceClassifier& classifier, std::vector<std::string> queries, bool raw,
               std::string instruction = {});
  [[nodiscard]] std::size_t units_per_record() const noexcept override {
    return queries_.empty() ? 1 : queries_.size();
  }
  [[nodiscard]] std::size_t unit_width() const noexcept override { return 1; }
  void prepare(const Record& record, std::span<embed::PreparedInput> out) const override;
  void compute(std::span<const embed::PreparedInput* const> inputs, std::span<float> out) const override;
  void finish(std::span<float> row) const override;

 private:
  const classify::SequenceClassifier& classifier_;
  std::vector<std::string> queries_;
  bool raw_;
  std::string instruction_;
};

}  // namespace warden::bulk

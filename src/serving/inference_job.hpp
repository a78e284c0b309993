#pragma once
// The work the scheduler batches, of every kind: one request's prepared inputs and the
// rows they become. A runner packs the inputs of every job in a batch into one call of its
// model and writes each job's rows back; jobs of many requests share a batch, and a request
// larger than a batch is split (scheduler.hpp).

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "classify/sequence_classifier.hpp"
#include "embed/embedder.hpp"
#include "serving/scheduler.hpp"

namespace warden::serving {

// What a model computes for an input.
enum class Output {
  Pooled,    // one vector (an embedder's, before normalisation and truncation)
  PerToken,  // a tokens x dim matrix (TEI's /embed_all)
  Logits,    // a classifier's raw logits, one per label
  // every retrieval output the embedder has (dense, sparse, multi-vector) from one pass; a
  // request keeps the ones it asked for, so every subset shares one cache entry
  Retrieval,
};

// What a job leaves behind, in input order.
struct InferenceRows {
  Embeddings rows;                                 // Pooled and Logits: inputs x width
  std::vector<Embeddings> per_token;               // PerToken: one matrix per input
  std::vector<embed::RetrievalVectors> retrieval;  // Retrieval: one per input
};

class InferenceJob final : public Job {
 public:
  using Done = std::function<void(InferenceJob&, Outcome)>;
  // width: the model's dim (Pooled, PerToken) or its label count (Logits).
  InferenceJob(BatchRunner& runner, Output output, std::size_t width,
               std::vector<embed::PreparedInput> inputs, std::shared_ptr<const Cancellation> cancellation,
               Done done);

  [[nodiscard]] Output output() const noexcept { return output_; }
  [[nodiscard]] const std::vector<embed::PreparedInput>& prepared() const noexcept { return inputs_; }
  // Hands the inputs over once the job is complete (no runner reads them any more).
  [[nodiscard]] std::vector<embed::PreparedInput> take_prepared() noexcept { return std::move(inputs_); }
  // Filled by the runners as batches complete.
  InferenceRows out;

  void complete(Outcome outcome) override { done_(*this, outcome); }

 private:
  Output output_;
  std::vector<embed::PreparedInput> inputs_;
  Done done_;
};

// Pooled vectors, not normalised (the caller normalises and truncates per request).
class EmbedRunner final : public BatchRunner {
 public:
  explicit EmbedRunner(const embed::Embedder& embedder) : embedder_(embedder) {}
  void run(std::span<const Slice> batch) override;

 private:
  const embed::Embedder& embedder_;
  std::vector<const embed::PreparedInput*> inputs_;
  std::vector<float> scratch_;
};

// Per-token vectors.
class TokenEmbedRunner final : public BatchRunner {
 public:
  explicit TokenEmbedRunner(const embed::Embedder& embedder) : embedder_(embedder) {}
  void run(std::span<const Slice> batch) override;

 private:
  const embed::Embedder& embedder_;
  std::vector<const embed::PreparedInput*> inputs_;
};

// Every retrieval output the embedder has.
class RetrievalRunner final : public BatchRunner {
 public:
  explicit RetrievalRunner(const embed::Embedder& embedder) : embedder_(embedder) {}
  void run(std::span<const Slice> batch) override;

 private:
  const embed::Embedder& embedder_;
  std::vector<const embed::PreparedInput*> inputs_;
};

// A classifier's raw logits (rerankers: one per pair).
class ClassifyRunner final : public BatchRunner {
 public:
  explicit ClassifyRunner(const classify::SequenceClassifier& classifier) : classifier_(classifier) {}
  void run(std::span<const Slice> batch) override;

 private:
  const classify::SequenceClassifier& classifier_;
  std::vector<const embed::PreparedInput*> inputs_;
  std::vector<float> scratch_;
};

}  // namespace warden::serving

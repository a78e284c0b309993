#pragma once
// The embedding work the scheduler batches: pooled vectors (/embed, /v1/embeddings,
// /similarity) and per-token vectors (/embed_all). A job holds one request's prepared
// inputs and receives its rows; the runner packs the inputs of every job in a batch into
// one call of the embedder.

#include <functional>
#include <memory>
#include <vector>

#include "embed/embedder.hpp"
#include "serving/scheduler.hpp"

namespace warden::serving {

class EmbedJob final : public Job {
 public:
  using Done = std::function<void(EmbedJob&, Outcome)>;
  EmbedJob(BatchRunner& runner, std::vector<PreparedInput> inputs, std::size_t dim,
           std::shared_ptr<const Cancellation> cancellation, Done done);

  [[nodiscard]] const std::vector<PreparedInput>& prepared() const noexcept { return inputs_; }
  // Hands the inputs over once the job is complete (no runner reads them any more).
  [[nodiscard]] std::vector<PreparedInput> take_prepared() noexcept { return std::move(inputs_); }
  // Filled row by row as batches complete: pooled vectors (EmbedRunner).
  Embeddings pooled;
  // One tokens x dim matrix per input (TokenEmbedRunner).
  std::vector<Embeddings> per_token;

  void complete(Outcome outcome) override { done_(*this, outcome); }

 private:
  static std::vector<std::size_t> token_counts(const std::vector<PreparedInput>& inputs);
  std::vector<PreparedInput> inputs_;
  Done done_;
};

// Pooled vectors, not normalised (the route normalises and truncates per request).
class EmbedRunner final : public BatchRunner {
 public:
  explicit EmbedRunner(const Embedder& embedder) : embedder_(embedder) {}
  void run(std::span<const Slice> batch) override;

 private:
  const Embedder& embedder_;
  std::vector<const PreparedInput*> inputs_;
  std::vector<float> scratch_;
};

// Per-token vectors (TEI's /embed_all).
class TokenEmbedRunner final : public BatchRunner {
 public:
  explicit TokenEmbedRunner(const Embedder& embedder) : embedder_(embedder) {}
  void run(std::span<const Slice> batch) override;

 private:
  const Embedder& embedder_;
  std::vector<const PreparedInput*> inputs_;
};

}  // namespace warden::serving

#include "serving/embed_jobs.hpp"

#include <algorithm>

namespace warden::serving {

std::vector<std::size_t> EmbedJob::token_counts(const std::vector<PreparedInput>& inputs) {
  std::vector<std::size_t> tokens;
  tokens.reserve(inputs.size());
  for (const PreparedInput& in : inputs) tokens.push_back(in.tokens);
  return tokens;
}

EmbedJob::EmbedJob(BatchRunner& runner, std::vector<PreparedInput> inputs, std::size_t dim,
                   std::shared_ptr<const Cancellation> cancellation, Done done)
    : Job(runner, token_counts(inputs), std::move(cancellation)),
      pooled(inputs.size(), dim),
      inputs_(std::move(inputs)),
      done_(std::move(done)) {}

void EmbedRunner::run(std::span<const Slice> batch) {
  inputs_.clear();
  for (const Slice& s : batch) {
    const auto& prepared = static_cast<const EmbedJob*>(s.job)->prepared();
    for (std::size_t i = s.begin; i < s.end; ++i) inputs_.push_back(&prepared[i]);
  }
  const std::size_t dim = embedder_.dim();
  scratch_.resize(inputs_.size() * dim);
  embedder_.embed_prepared(inputs_, scratch_);
  // Each slice is a contiguous run of its job's rows.
  const float* from = scratch_.data();
  for (const Slice& s : batch) {
    auto& job = *static_cast<EmbedJob*>(s.job);
    const std::size_t n = (s.end - s.begin) * dim;
    std::copy_n(from, n, job.pooled.row(s.begin).data());
    from += n;
  }
}

void TokenEmbedRunner::run(std::span<const Slice> batch) {
  inputs_.clear();
  for (const Slice& s : batch) {
    const auto& prepared = static_cast<const EmbedJob*>(s.job)->prepared();
    for (std::size_t i = s.begin; i < s.end; ++i) inputs_.push_back(&prepared[i]);
  }
  std::vector<Embeddings> states = embedder_.embed_tokens(inputs_);
  std::size_t k = 0;
  for (const Slice& s : batch) {
    auto& job = *static_cast<EmbedJob*>(s.job);
    if (job.per_token.size() != job.inputs()) job.per_token.resize(job.inputs());
    for (std::size_t i = s.begin; i < s.end; ++i) job.per_token[i] = std::move(states[k++]);
  }
}

}  // namespace warden::serving

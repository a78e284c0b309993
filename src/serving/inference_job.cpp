#include "serving/inference_job.hpp"

#include <algorithm>

namespace warden::serving {

namespace {

std::vector<std::size_t> token_counts(const std::vector<embed::PreparedInput>& inputs) {
  std::vector<std::size_t> tokens;
  tokens.reserve(inputs.size());
  for (const embed::PreparedInput& in : inputs) tokens.push_back(in.tokens);
  return tokens;
}

// The batch's inputs, slice after slice, into `out`.
void gather(std::span<const Slice> batch, std::vector<const embed::PreparedInput*>& out) {
  out.clear();
  for (const Slice& s : batch) {
    const auto& prepared = static_cast<const InferenceJob*>(s.job)->prepared();
    for (std::size_t i = s.begin; i < s.end; ++i) out.push_back(&prepared[i]);
  }
}

// Hands `width` values per input back to their jobs: each slice is a contiguous run of its
// job's rows.
void scatter_rows(std::span<const Slice> batch, const std::vector<float>& values, std::size_t width) {
  const float* from = values.data();
  for (const Slice& s : batch) {
    auto& job = *static_cast<InferenceJob*>(s.job);
    const std::size_t n = (s.end - s.begin) * width;
    std::copy_n(from, n, job.out.rows.values().data() + s.begin * width);
    from += n;
  }
}

}  // namespace

InferenceJob::InferenceJob(BatchRunner& runner, Output output, std::size_t width,
                           std::vector<embed::PreparedInput> inputs,
                           std::shared_ptr<const Cancellation> cancellation, Done done)
    : Job(runner, token_counts(inputs), std::move(cancellation)),
      output_(output),
      inputs_(std::move(inputs)),
      done_(std::move(done)) {
  if (output == Output::PerToken) {
    out.per_token.resize(inputs_.size());
  } else if (output == Output::Retrieval) {
    out.retrieval.resize(inputs_.size());
  } else {
    out.rows = Embeddings(inputs_.size(), width);
  }
}

void EmbedRunner::run(std::span<const Slice> batch) {
  gather(batch, inputs_);
  const std::size_t dim = embedder_.dim();
  scratch_.resize(inputs_.size() * dim);
  embedder_.embed_prepared(inputs_, scratch_);
  scatter_rows(batch, scratch_, dim);
}

void TokenEmbedRunner::run(std::span<const Slice> batch) {
  gather(batch, inputs_);
  std::vector<Embeddings> states = embedder_.embed_tokens(inputs_);
  std::size_t k = 0;
  for (const Slice& s : batch) {
    auto& job = *static_cast<InferenceJob*>(s.job);
    for (std::size_t i = s.begin; i < s.end; ++i) job.out.per_token[i] = std::move(states[k++]);
  }
}

void RetrievalRunner::run(std::span<const Slice> batch) {
  gather(batch, inputs_);
  std::vector<embed::RetrievalVectors> outputs = embedder_.embed_retrieval(inputs_);
  std::size_t k = 0;
  for (const Slice& s : batch) {
    auto& job = *static_cast<InferenceJob*>(s.job);
    for (std::size_t i = s.begin; i < s.end; ++i) job.out.retrieval[i] = std::move(outputs[k++]);
  }
}

void ClassifyRunner::run(std::span<const Slice> batch) {
  gather(batch, inputs_);
  const std::size_t labels = classifier_.labels().size();
  scratch_.resize(inputs_.size() * labels);
  classifier_.classify_prepared(inputs_, scratch_);
  scatter_rows(batch, scratch_, labels);
}

}  // namespace warden::serving

#include "serving/classify_jobs.hpp"

#include <algorithm>

namespace warden::serving {

namespace {

std::vector<std::size_t> token_counts(const std::vector<PreparedInput>& inputs) {
  std::vector<std::size_t> tokens;
  tokens.reserve(inputs.size());
  for (const PreparedInput& in : inputs) tokens.push_back(in.tokens);
  return tokens;
}

}  // namespace

ClassifyJob::ClassifyJob(BatchRunner& runner, std::vector<PreparedInput> inputs, std::size_t labels,
                         std::shared_ptr<const Cancellation> cancellation, Done done)
    : Job(runner, token_counts(inputs), std::move(cancellation)),
      logits(inputs.size() * labels, 0.0F),
      inputs_(std::move(inputs)),
      labels_(labels),
      done_(std::move(done)) {}

void ClassifyRunner::run(std::span<const Slice> batch) {
  inputs_.clear();
  for (const Slice& s : batch) {
    const auto& prepared = static_cast<const ClassifyJob*>(s.job)->prepared();
    for (std::size_t i = s.begin; i < s.end; ++i) inputs_.push_back(&prepared[i]);
  }
  const std::size_t labels = classifier_.labels().size();
  scratch_.resize(inputs_.size() * labels);
  classifier_.classify_prepared(inputs_, scratch_);
  // Each slice is a contiguous run of its job's rows.
  const float* from = scratch_.data();
  for (const Slice& s : batch) {
    auto& job = *static_cast<ClassifyJob*>(s.job);
    const std::size_t n = (s.end - s.begin) * labels;
    std::copy_n(from, n, job.logits.data() + s.begin * labels);
    from += n;
  }
}

}  // namespace warden::serving

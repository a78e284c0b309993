#pragma once
// The sequence-classification work the scheduler batches (/rerank, /v1/rerank, /predict):
// a job holds one request's prepared inputs (query/passage pairs, texts) and receives one
// row of raw logits per input. Jobs of many requests share batches, and a request larger
// than a batch is split, like the embedding jobs (embed_jobs.hpp).

#include <functional>
#include <memory>
#include <vector>

#include "embed/sequence_classifier.hpp"
#include "serving/scheduler.hpp"

namespace warden::serving {

class ClassifyJob final : public Job {
 public:
  using Done = std::function<void(ClassifyJob&, Outcome)>;
  ClassifyJob(BatchRunner& runner, std::vector<PreparedInput> inputs, std::size_t labels,
              std::shared_ptr<const Cancellation> cancellation, Done done);

  [[nodiscard]] const std::vector<PreparedInput>& prepared() const noexcept { return inputs_; }
  // Moves the inputs out once the job has completed (the guard reads their ids).
  [[nodiscard]] std::vector<PreparedInput> take_prepared() noexcept { return std::move(inputs_); }
  [[nodiscard]] std::size_t labels() const noexcept { return labels_; }
  // inputs() x labels() raw logits, filled row by row as batches complete.
  std::vector<float> logits;

  void complete(Outcome outcome) override { done_(*this, outcome); }

 private:
  std::vector<PreparedInput> inputs_;
  std::size_t labels_;
  Done done_;
};

class ClassifyRunner final : public BatchRunner {
 public:
  explicit ClassifyRunner(const SequenceClassifier& classifier) : classifier_(classifier) {}
  void run(std::span<const Slice> batch) override;

 private:
  const SequenceClassifier& classifier_;
  std::vector<const PreparedInput*> inputs_;
  std::vector<float> scratch_;
};

}  // namespace warden::serving

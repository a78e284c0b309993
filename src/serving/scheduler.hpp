#pragma once
// The scheduler: admission control and dynamic batching in front of one compute thread.
//
//   submit(job) ──► waiting (bounded, FIFO) ──► admitted (≤ max_concurrent inputs) ──► batches
//
// * Admission: at most `max_concurrent` inputs are admitted (queued for compute or being
//   computed). A job that does not fit waits in a FIFO of at most `max_queue` jobs; when
//   that is full it is rejected at once (HTTP 429). A job not started within
//   `queue_timeout` of its submission times out (504) without being computed; a job whose
//   client went away (its Cancellation is set) is dropped without being computed.
// * Batching: whenever the compute thread is free it takes admitted inputs in FIFO order
//   into one engine batch, up to `max_batch_tokens` tokens and `max_batch_inputs` inputs:
//   the oldest job's and those of every later job that shares its BatchRunner (jobs of
//   other runners keep their places, and the oldest of them starts the next batch),
//   splitting a job larger than a batch. There is no wait timer: requests that arrive while a batch computes
//   form the next batch, so batches grow with load and a lone request never waits.
//
// Thread-safe; complete() of a job is called exactly once, on the compute thread or (for
// an immediate rejection) on the submitting thread, never under the scheduler's lock.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/cancellation.hpp"

namespace warden::serving {

using Clock = std::chrono::steady_clock;

enum class Outcome {
  Done,       // every input computed
  Rejected,   // the wait queue was full (429)
  TimedOut,   // waited longer than queue_timeout (504)
  Cancelled,  // the client went away before the job was computed
  Failed,     // the runner threw; Job::error() says why
  Stopped,    // the scheduler stopped before the job was computed (503)
};
[[nodiscard]] std::string_view outcome_name(Outcome outcome) noexcept;

// What a job spent where; filled in by the scheduler before complete().
struct JobTimings {
  Clock::time_point submitted{};
  Clock::duration queue{};      // submitted -> its first batch started
  Clock::duration inference{};  // time in the batches that computed it
  std::size_t batches = 0;
};

class Job;

// Part of a job in a batch: inputs [begin, end).
struct Slice {
  Job* job = nullptr;
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Computes batches of one kind of work (pooled embeddings, per-token embeddings, ...).
// Jobs that share a runner may be merged into one batch.
class BatchRunner {
 public:
  virtual ~BatchRunner() = default;
  // Called on the compute thread only. Throwing fails every job in the batch.
  virtual void run(std::span<const Slice> batch) = 0;
};

class Job {
 public:
  // tokens[i]: the token count of input i (what batch limits count; at least 1 is assumed).
  Job(BatchRunner& runner, std::vector<std::size_t> tokens, std::shared_ptr<const Cancellation> cancellation);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  virtual ~Job() = default;

  [[nodiscard]] std::size_t inputs() const noexcept { return tokens_.size(); }
  [[nodiscard]] std::size_t tokens(std::size_t i) const noexcept { return tokens_[i]; }
  [[nodiscard]] std::size_t total_tokens() const noexcept { return total_tokens_; }
  [[nodiscard]] const JobTimings& timings() const noexcept { return timings_; }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  // What the runner threw, for Outcome::Failed (so a caller can map its kind).
  [[nodiscard]] const std::exception_ptr& exception() const noexcept { return exception_; }

  // Called once when the job leaves the scheduler, whatever the outcome.
  virtual void complete(Outcome outcome) = 0;

 private:
  friend class Scheduler;
  BatchRunner& runner_;
  std::vector<std::size_t> tokens_;
  std::size_t total_tokens_ = 0;
  std::shared_ptr<const Cancellation> cancellation_;
  JobTimings timings_;
  std::string error_;
  std::exception_ptr exception_;
  Clock::time_point deadline_ = Clock::time_point::max();
  std::size_t next_ = 0;  // first input not yet taken into a batch
  std::size_t done_ = 0;  // inputs computed
  bool failed_ = false;
};

struct SchedulerOptions {
  std::size_t max_batch_tokens = 16384;
  std::size_t max_batch_inputs = 256;
  std::size_t max_concurrent = 2048;           // inputs admitted at once
  std::size_t max_queue = 1024;                // jobs waiting for admission
  std::chrono::milliseconds queue_timeout{0};  // 0: wait as long as it takes
};

// What a batch was, for metrics.
struct BatchStats {
  std::size_t inputs = 0;
  std::size_t tokens = 0;
  std::size_t jobs = 0;
  Clock::duration duration{};
};

struct SchedulerObserver {
  std::function<void(const BatchStats&)> on_batch;      // compute thread
  std::function<void(Outcome, const Job&)> on_outcome;  // before complete()
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options, SchedulerObserver observer = {});
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  // Stops: jobs not yet computed complete with Stopped; the batch in progress finishes.
  ~Scheduler();

  // Takes the job in; it completes later (or at once with Rejected when the queue is full).
  void submit(std::shared_ptr<Job> job);

  // True when a job submitted now would be rejected: lets a caller refuse before spending
  // time on tokenization.
  [[nodiscard]] bool saturated() const;

  struct Load {
    std::size_t admitted_inputs = 0;  // admitted and not finished
    std::size_t admitted_jobs = 0;
    std::size_t waiting_jobs = 0;
  };
  [[nodiscard]] Load load() const;
  [[nodiscard]] const SchedulerOptions& options() const noexcept { return options_; }

  // Stops accepting (later submits complete with Stopped) and waits at most `grace` for
  // admitted and waiting jobs to be computed; what is left then completes with Stopped.
  void drain(std::chrono::milliseconds grace);

 private:
  struct Finished {
    std::shared_ptr<Job> job;
    Outcome outcome;
  };
  void loop();
  // All under mutex_. Appends jobs that leave to `out`.
  void admit_waiting();
  void sweep(Clock::time_point now, std::vector<Finished>& out);
  void release(Job& job);
  void finish(std::vector<Finished>& finished);

  SchedulerOptions options_;
  SchedulerObserver observer_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::shared_ptr<Job>> waiting_;
  std::deque<std::shared_ptr<Job>> admitted_;  // FIFO; the head may be partly computed
  std::size_t admitted_inputs_ = 0;
  std::size_t in_batch_jobs_ = 0;  // jobs of the batch being computed, no longer in admitted_
  bool accepting_ = true;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace warden::serving

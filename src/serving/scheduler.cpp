#include "serving/scheduler.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace warden::serving {

std::string_view outcome_name(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::Done:
      return "done";
    case Outcome::Rejected:
      return "rejected";
    case Outcome::TimedOut:
      return "timed_out";
    case Outcome::Cancelled:
      return "cancelled";
    case Outcome::Failed:
      return "failed";
    case Outcome::Stopped:
      return "stopped";
  }
  return "unknown";
}

Job::Job(BatchRunner& runner, std::vector<std::size_t> tokens,
         std::shared_ptr<const Cancellation> cancellation)
    : runner_(runner), tokens_(std::move(tokens)), cancellation_(std::move(cancellation)) {
  for (std::size_t& t : tokens_) {
    t = std::max<std::size_t>(t, 1);  // an empty input still takes a row of the batch
    total_tokens_ += t;
  }
}

Scheduler::Scheduler(SchedulerOptions options, SchedulerObserver observer)
    : options_(options), observer_(std::move(observer)) {
  options_.max_batch_tokens = std::max<std::size_t>(options_.max_batch_tokens, 1);
  options_.max_batch_inputs = std::max<std::size_t>(options_.max_batch_inputs, 1);
  options_.max_concurrent = std::max<std::size_t>(options_.max_concurrent, 1);
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() {
  {
    const std::lock_guard lock(mutex_);
    accepting_ = false;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Scheduler::submit(std::shared_ptr<Job> job) {
  Outcome refused = Outcome::Done;
  {
    const std::lock_guard lock(mutex_);
    Job& j = *job;
    j.timings_.submitted = Clock::now();
    if (options_.queue_timeout.count() > 0) j.deadline_ = j.timings_.submitted + options_.queue_timeout;
    const bool fits = admitted_inputs_ == 0 || admitted_inputs_ + j.inputs() <= options_.max_concurrent;
    if (!accepting_) {
      refused = Outcome::Stopped;
    } else if (j.inputs() == 0) {
      refused = Outcome::Done;  // nothing to compute: complete at once below
      j.timings_.queue = {};
    } else if (waiting_.empty() && fits) {
      admitted_inputs_ += j.inputs();
      admitted_.push_back(std::move(job));
      wake_.notify_one();  // under the lock, for the same reason as WorkerPool::post
    } else if (waiting_.size() >= options_.max_queue) {
      refused = Outcome::Rejected;
    } else {
      waiting_.push_back(std::move(job));
      wake_.notify_one();
    }
  }
  if (job) {  // not taken in: it completes here, on the submitting thread
    if (observer_.on_outcome) observer_.on_outcome(refused, *job);
    job->complete(refused);
  }
}

bool Scheduler::saturated() const {
  const std::lock_guard lock(mutex_);
  return !accepting_ || (admitted_inputs_ > 0 && waiting_.size() >= options_.max_queue);
}

Scheduler::Load Scheduler::load() const {
  const std::lock_guard lock(mutex_);
  return {admitted_inputs_, admitted_.size() + in_batch_jobs_, waiting_.size()};
}

void Scheduler::drain(std::chrono::milliseconds grace) {
  std::unique_lock lock(mutex_);
  accepting_ = false;
  idle_.wait_for(lock, grace,
                 [this] { return waiting_.empty() && admitted_.empty() && in_batch_jobs_ == 0; });
  stopping_ = true;
  lock.unlock();
  wake_.notify_all();
}

void Scheduler::admit_waiting() {
  while (!waiting_.empty()) {
    Job& j = *waiting_.front();
    if (admitted_inputs_ > 0 && admitted_inputs_ + j.inputs() > options_.max_concurrent) return;
    admitted_inputs_ += j.inputs();
    admitted_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

void Scheduler::release(Job& job) {
  admitted_inputs_ -= job.inputs();
}

void Scheduler::sweep(Clock::time_point now, std::vector<Finished>& out) {
  // Waiting jobs hold no admission; admitted ones give theirs back.
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Job& j = **it;
    if (j.cancellation_ && j.cancellation_->cancelled()) {
      out.push_back({std::move(*it), Outcome::Cancelled});
    } else if (now >= j.deadline_) {
      out.push_back({std::move(*it), Outcome::TimedOut});
    } else {
      ++it;
      continue;
    }
    it = waiting_.erase(it);
  }
  for (auto it = admitted_.begin(); it != admitted_.end();) {
    Job& j = **it;
    if (j.cancellation_ && j.cancellation_->cancelled()) {
      out.push_back({std::move(*it), Outcome::Cancelled});  // also mid-way: the rest is not computed
    } else if (j.next_ == 0 && now >= j.deadline_) {
      out.push_back({std::move(*it), Outcome::TimedOut});
    } else {
      ++it;
      continue;
    }
    release(j);
    it = admitted_.erase(it);
  }
  admit_waiting();
}

void Scheduler::finish(std::vector<Finished>& finished) {
  for (Finished& f : finished) {
    if (observer_.on_outcome) observer_.on_outcome(f.outcome, *f.job);
    f.job->complete(f.outcome);
  }
  finished.clear();
}

void Scheduler::loop() {
  std::vector<Finished> finished;
  std::vector<Slice> slices;
  std::vector<std::shared_ptr<Job>> jobs;
  std::unique_lock lock(mutex_);
  for (;;) {
    const Clock::time_point now = Clock::now();
    sweep(now, finished);
    if (stopping_) {
      for (auto& j : admitted_) {
        release(*j);
        finished.push_back({std::move(j), Outcome::Stopped});
      }
      for (auto& j : waiting_) finished.push_back({std::move(j), Outcome::Stopped});
      admitted_.clear();
      waiting_.clear();
      lock.unlock();
      finish(finished);
      idle_.notify_all();
      return;
    }
    if (admitted_.empty()) {
      if (!finished.empty()) {
        lock.unlock();
        finish(finished);
        lock.lock();
        continue;
      }
      idle_.notify_all();
      wake_.wait(lock);
      continue;
    }

    // One batch for the runner of the oldest admitted job: its inputs and those of every
    // later admitted job of the same runner, in FIFO order, up to the limits. Jobs of other
    // runners (another model, /embed_all beside /embed) keep their places, and the next
    // batch starts with the oldest of them: interleaved requests for two models still make
    // full batches, and no model waits behind another for more than one batch.
    BatchRunner& runner = admitted_.front()->runner_;
    std::size_t batch_tokens = 0;
    std::size_t batch_inputs = 0;
    for (auto it = admitted_.begin(); it != admitted_.end();) {
      Job& j = **it;
      if (&j.runner_ != &runner) {
        ++it;
        continue;
      }
      const std::size_t begin = j.next_;
      std::size_t end = begin;
      while (end < j.inputs()) {
        const std::size_t t = j.tokens(end);
        // The first input always goes, even when it alone is over the token limit.
        if (batch_inputs > 0 &&
            (batch_tokens + t > options_.max_batch_tokens || batch_inputs + 1 > options_.max_batch_inputs))
          break;
        batch_tokens += t;
        ++batch_inputs;
        ++end;
      }
      if (end == begin) break;
      if (begin == 0) j.timings_.queue = now - j.timings_.submitted;
      j.next_ = end;
      slices.push_back({&j, begin, end});
      jobs.push_back(*it);
      if (end < j.inputs()) break;  // the batch is full; the rest of this job goes next
      it = admitted_.erase(it);
    }
    in_batch_jobs_ = jobs.size();
    lock.unlock();
    finish(finished);

    std::string error;
    std::exception_ptr exception;
    const Clock::time_point start = Clock::now();
    try {
      runner.run(slices);
    } catch (const std::exception& e) {
      error = e.what();
      exception = std::current_exception();
    } catch (...) {
      error = "unknown error in the batch runner";
      exception = std::current_exception();
    }
    const Clock::duration took = Clock::now() - start;
    if (observer_.on_batch) observer_.on_batch({batch_inputs, batch_tokens, jobs.size(), took});

    lock.lock();
    for (std::size_t i = 0; i < slices.size(); ++i) {
      Job& j = *slices[i].job;
      j.timings_.inference += took;
      ++j.timings_.batches;
      j.done_ += slices[i].end - slices[i].begin;
      if (!error.empty()) {
        j.failed_ = true;
        j.error_ = error;
        j.exception_ = exception;
        // A split job may still have inputs queued: they are not computed.
        const auto it = std::find(admitted_.begin(), admitted_.end(), jobs[i]);
        if (it != admitted_.end()) admitted_.erase(it);
        release(j);
        finished.push_back({std::move(jobs[i]), Outcome::Failed});
      } else if (j.done_ == j.inputs()) {
        release(j);
        finished.push_back({std::move(jobs[i]), Outcome::Done});
      }
    }
    slices.clear();
    jobs.clear();
    in_batch_jobs_ = 0;
    admit_waiting();
    lock.unlock();
    finish(finished);
    lock.lock();
  }
}

}  // namespace warden::serving

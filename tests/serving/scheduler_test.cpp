// The scheduler's contract: FIFO batches within the token and input limits, split jobs,
// admission with a bounded queue (429), queue timeouts (504), dropped cancelled jobs, and
// failures that fail only the jobs of the failing batch.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "serving/scheduler.hpp"

namespace warden::serving {
namespace {

using namespace std::chrono_literals;

// Records every batch; optionally blocks until released, or throws.
class RecordingRunner final : public BatchRunner {
 public:
  void run(std::span<const Slice> batch) override {
    std::unique_lock lock(mutex_);
    std::vector<std::pair<int, std::size_t>> b;  // (job tag, inputs)
    for (const Slice& s : batch) b.emplace_back(tag_of(s.job), s.end - s.begin);
    batches.push_back(b);
    ++entered;
    changed.notify_all();
    changed.wait_for(lock, 10s, [this] { return !gated; });
    if (fail) throw std::runtime_error("engine exploded");
  }
  void release() {
    const std::lock_guard lock(mutex_);
    gated = false;
    changed.notify_all();
  }
  bool wait_entered(int n) {
    std::unique_lock lock(mutex_);
    return changed.wait_for(lock, 10s, [&] { return entered >= n; });
  }
  static int tag_of(const Job* job);

  std::mutex mutex_;
  std::condition_variable changed;
  std::vector<std::vector<std::pair<int, std::size_t>>> batches;
  int entered = 0;
  bool gated = false;
  bool fail = false;
};

class TestJob final : public Job {
 public:
  TestJob(BatchRunner& runner, int job_tag, std::vector<std::size_t> tokens,
          std::shared_ptr<const Cancellation> cancel = nullptr)
      : Job(runner, std::move(tokens), std::move(cancel)), tag(job_tag) {}
  void complete(Outcome o) override { outcome.set_value(o); }
  int tag;
  std::promise<Outcome> outcome;
};

int RecordingRunner::tag_of(const Job* job) {
  return static_cast<const TestJob*>(job)->tag;
}

std::shared_ptr<TestJob> job(BatchRunner& r, int tag, std::size_t inputs, std::size_t tokens_each = 10,
                             std::shared_ptr<const Cancellation> cancel = nullptr) {
  return std::make_shared<TestJob>(r, tag, std::vector<std::size_t>(inputs, tokens_each), std::move(cancel));
}

Outcome wait(TestJob& j) {
  auto f = j.outcome.get_future();
  EXPECT_EQ(f.wait_for(10s), std::future_status::ready);
  return f.get();
}

TEST(Scheduler, MergesRequestsThatArriveWhileTheEngineIsBusy) {
  RecordingRunner runner;
  runner.gated = true;
  Scheduler s({.max_batch_tokens = 1000, .max_batch_inputs = 100});
  auto first = job(runner, 1, 1);
  auto f1 = first->outcome.get_future();
  s.submit(first);
  ASSERT_TRUE(runner.wait_entered(1));  // the first request runs alone: no wait timer
  std::vector<std::shared_ptr<TestJob>> later;
  std::vector<std::future<Outcome>> futures;
  for (int i = 2; i <= 4; ++i) {
    later.push_back(job(runner, i, 2));
    futures.push_back(later.back()->outcome.get_future());
    s.submit(later.back());
  }
  runner.release();
  EXPECT_EQ(f1.get(), Outcome::Done);
  for (auto& f : futures) EXPECT_EQ(f.get(), Outcome::Done);
  ASSERT_EQ(runner.batches.size(), 2U);
  EXPECT_EQ(runner.batches[0], (std::vector<std::pair<int, std::size_t>>{{1, 1}}));
  EXPECT_EQ(runner.batches[1], (std::vector<std::pair<int, std::size_t>>{{2, 2}, {3, 2}, {4, 2}}));
}

TEST(Scheduler, InterleavedRunnersStillMakeFullBatches) {
  // Requests for two models, arriving alternately: each batch takes the oldest job's runner
  // and every later job of that runner, so neither model computes one request at a time.
  RecordingRunner a;
  RecordingRunner b;
  a.gated = true;
  Scheduler s({.max_batch_tokens = 1000, .max_batch_inputs = 100});
  auto blocker = job(a, 0, 1);
  s.submit(blocker);
  ASSERT_TRUE(a.wait_entered(1));
  std::vector<std::shared_ptr<TestJob>> jobs;
  std::vector<std::future<Outcome>> futures;
  for (int i = 1; i <= 6; ++i) {
    jobs.push_back(job(i % 2 == 1 ? static_cast<BatchRunner&>(a) : static_cast<BatchRunner&>(b), i, 1));
    futures.push_back(jobs.back()->outcome.get_future());
    s.submit(jobs.back());
  }
  a.release();
  for (auto& f : futures) EXPECT_EQ(f.get(), Outcome::Done);
  ASSERT_EQ(a.batches.size(), 2U);
  EXPECT_EQ(a.batches[1], (std::vector<std::pair<int, std::size_t>>{{1, 1}, {3, 1}, {5, 1}}));
  ASSERT_EQ(b.batches.size(), 1U);
  EXPECT_EQ(b.batches[0], (std::vector<std::pair<int, std::size_t>>{{2, 1}, {4, 1}, {6, 1}}));
}

TEST(Scheduler, SplitsAJobLargerThanABatchAndKeepsFifoOrder) {
  RecordingRunner runner;
  runner.gated = true;
  Scheduler s({.max_batch_tokens = 50, .max_batch_inputs = 100});
  auto blocker = job(runner, 0, 1);
  s.submit(blocker);
  ASSERT_TRUE(runner.wait_entered(1));
  auto big = job(runner, 1, 12);  // 12 inputs x 10 tokens: 3 batches of at most 5
  auto small = job(runner, 2, 2);
  s.submit(big);
  s.submit(small);
  runner.release();
  EXPECT_EQ(wait(*big), Outcome::Done);
  EXPECT_EQ(wait(*small), Outcome::Done);
  EXPECT_EQ(big->timings().batches, 3U);
  ASSERT_EQ(runner.batches.size(), 4U);
  EXPECT_EQ(runner.batches[1], (std::vector<std::pair<int, std::size_t>>{{1, 5}}));
  EXPECT_EQ(runner.batches[2], (std::vector<std::pair<int, std::size_t>>{{1, 5}}));
  EXPECT_EQ(runner.batches[3], (std::vector<std::pair<int, std::size_t>>{{1, 2}, {2, 2}}));
}

TEST(Scheduler, AnInputOverTheTokenLimitStillRunsAlone) {
  RecordingRunner runner;
  Scheduler s({.max_batch_tokens = 5, .max_batch_inputs = 10});
  auto j = job(runner, 1, 2, 100);
  s.submit(j);
  EXPECT_EQ(wait(*j), Outcome::Done);
  ASSERT_EQ(runner.batches.size(), 2U);
}

TEST(Scheduler, InputLimitCapsABatch) {
  RecordingRunner runner;
  Scheduler s({.max_batch_tokens = 100000, .max_batch_inputs = 4});
  auto j = job(runner, 1, 10, 1);
  s.submit(j);
  EXPECT_EQ(wait(*j), Outcome::Done);
  ASSERT_EQ(runner.batches.size(), 3U);
  EXPECT_EQ(runner.batches[2][0].second, 2U);
}

TEST(Scheduler, FullQueueRejectsAtOnce) {
  RecordingRunner runner;
  runner.gated = true;
  Scheduler s({.max_concurrent = 4, .max_queue = 1});
  auto a = job(runner, 1, 4);
  s.submit(a);  // admitted: 4 of 4 inputs
  ASSERT_TRUE(runner.wait_entered(1));
  auto b = job(runner, 2, 1);
  s.submit(b);  // waits
  EXPECT_EQ(s.load().waiting_jobs, 1U);
  EXPECT_TRUE(s.saturated());
  auto c = job(runner, 3, 1);
  s.submit(c);  // queue full
  EXPECT_EQ(wait(*c), Outcome::Rejected);
  runner.release();
  EXPECT_EQ(wait(*a), Outcome::Done);
  EXPECT_EQ(wait(*b), Outcome::Done);
  EXPECT_FALSE(s.saturated());
}

TEST(Scheduler, AdmissionCountsInputsNotRequests) {
  RecordingRunner runner;
  runner.gated = true;
  Scheduler s({.max_concurrent = 5, .max_queue = 10});
  auto a = job(runner, 1, 3);
  s.submit(a);
  ASSERT_TRUE(runner.wait_entered(1));
  auto b = job(runner, 2, 2);  // 3 + 2 <= 5: admitted
  auto c = job(runner, 3, 1);  // 6 > 5: waits
  s.submit(b);
  s.submit(c);
  const auto load = s.load();
  EXPECT_EQ(load.admitted_inputs, 5U);
  EXPECT_EQ(load.waiting_jobs, 1U);
  runner.release();
  EXPECT_EQ(wait(*c), Outcome::Done);
}

TEST(Scheduler, QueuedJobsTimeOutWithoutBeingComputed) {
  RecordingRunner runner;
  runner.gated = true;
  Scheduler s({.max_concurrent = 1, .max_queue = 10, .queue_timeout = 50ms});
  auto a = job(runner, 1, 1);
  s.submit(a);
  ASSERT_TRUE(runner.wait_entered(1));
  auto b = job(runner, 2, 1);
  s.submit(b);
  std::this_thread::sleep_for(120ms);
  runner.release();
  EXPECT_EQ(wait(*a), Outcome::Done);  // it started in time
  EXPECT_EQ(wait(*b), Outcome::TimedOut);
  for (const auto& batch : runner.batches) {
    for (const auto& [tag, n] : batch) EXPECT_NE(tag, 2);
  }
}

TEST(Scheduler, CancelledJobsAreDroppedWithoutBeingComputed) {
  RecordingRunner runner;
  runner.gated = true;
  Scheduler s({});
  auto a = job(runner, 1, 1);
  s.submit(a);
  ASSERT_TRUE(runner.wait_entered(1));
  auto cancel = std::make_shared<Cancellation>();
  auto b = job(runner, 2, 3, 10, cancel);
  auto c = job(runner, 3, 1);
  s.submit(b);
  s.submit(c);
  cancel->cancel();
  runner.release();
  EXPECT_EQ(wait(*b), Outcome::Cancelled);
  EXPECT_EQ(wait(*c), Outcome::Done);
  ASSERT_EQ(runner.batches.size(), 2U);
  EXPECT_EQ(runner.batches[1], (std::vector<std::pair<int, std::size_t>>{{3, 1}}));
}

TEST(Scheduler, AFailingBatchFailsItsJobsAndTheNextBatchRuns) {
  RecordingRunner runner;
  runner.fail = true;
  Scheduler s({});
  auto a = job(runner, 1, 2);
  s.submit(a);
  EXPECT_EQ(wait(*a), Outcome::Failed);
  EXPECT_EQ(a->error(), "engine exploded");
  runner.fail = false;
  auto b = job(runner, 2, 2);
  s.submit(b);
  EXPECT_EQ(wait(*b), Outcome::Done);
  EXPECT_EQ(s.load().admitted_inputs, 0U);
}

TEST(Scheduler, JobsOfDifferentRunnersAreNotMerged) {
  RecordingRunner r1;
  RecordingRunner r2;
  r1.gated = true;
  Scheduler s({});
  auto blocker = job(r1, 0, 1);
  s.submit(blocker);
  ASSERT_TRUE(r1.wait_entered(1));
  auto a = job(r2, 1, 1);
  auto b = job(r1, 2, 1);
  s.submit(a);
  s.submit(b);
  r1.release();
  EXPECT_EQ(wait(*a), Outcome::Done);
  EXPECT_EQ(wait(*b), Outcome::Done);
  EXPECT_EQ(r2.batches.size(), 1U);
  EXPECT_EQ(r1.batches.size(), 2U);
}

TEST(Scheduler, DrainFinishesQueuedWorkThenRefuses) {
  RecordingRunner runner;
  Scheduler s({});
  std::vector<std::shared_ptr<TestJob>> jobs;
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(job(runner, i, 3));
    s.submit(jobs.back());
  }
  s.drain(5s);
  for (auto& j : jobs) EXPECT_EQ(wait(*j), Outcome::Done);
  auto late = job(runner, 99, 1);
  s.submit(late);
  EXPECT_EQ(wait(*late), Outcome::Stopped);
}

TEST(Scheduler, ManyThreadsSubmittingAllComplete) {
  RecordingRunner runner;
  Scheduler s({.max_batch_tokens = 64, .max_concurrent = 32, .max_queue = 100000});
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto j = job(runner, t * 1000 + i, 1 + static_cast<std::size_t>(i % 5));
        auto f = j->outcome.get_future();
        s.submit(j);
        if (f.get() == Outcome::Done) ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 800);
  EXPECT_EQ(s.load().admitted_inputs, 0U);
}

}  // namespace
}  // namespace warden::serving

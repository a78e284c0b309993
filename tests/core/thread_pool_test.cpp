#include "core/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace warden {
namespace {

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4U);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::atomic<int>> hits(97);
    pool.parallel_for(hits.size(), [&](std::size_t i) { hits[i].fetch_add(1); });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

// Jobs back to back with tasks of uneven length: a worker that is late for one job must
// never take a task of the next under the old job's function or count.
TEST(ThreadPool, BackToBackJobsOfDifferentSizesNeverMix) {
  ThreadPool pool(3);
  for (int round = 0; round < 3000; ++round) {
    const std::size_t tasks = 1 + static_cast<std::size_t>(round * 7919) % 37;
    std::vector<std::atomic<int>> hits(tasks);
    pool.parallel_for(tasks, [&, round](std::size_t i) {
      if ((i + static_cast<std::size_t>(round)) % 5 == 0) {
        volatile int spin = 0;
        for (int s = 0; s < 2000; ++s) spin = spin + s;
      }
      hits[i].fetch_add(1);
    });
    for (std::size_t i = 0; i < tasks; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "round " << round << " task " << i;
  }
}

// More tasks than one job word counts run in slices, each task once.
TEST(ThreadPool, MoreTasksThanOneWordCounts) {
  ThreadPool pool(2);
  std::vector<std::atomic<unsigned char>> hits(70'000);
  pool.parallel_for(hits.size(), [&](std::size_t i) { hits[i].fetch_add(1); });
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << i;
}

// Many more workers than cores, most of them asleep or off-core when a small job is posted:
// the job completes (the caller takes what they do not) with each task run once.
TEST(ThreadPool, CallerFinishesWithoutIdleWorkers) {
  ThreadPool pool(8);  // more workers than this machine has cores: most are not running
  for (int round = 0; round < 500; ++round) {
    std::atomic<int> count{0};
    pool.parallel_for(2, [&](std::size_t) { count.fetch_add(1); });
    ASSERT_EQ(count.load(), 2);
  }
}

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  pool.parallel_for(8, [&](std::size_t) { pool.parallel_for(4, [&](std::size_t) { total.fetch_add(1); }); });
  EXPECT_EQ(total.load(), 32);
}

TEST(ThreadPool, SingleThreadPoolAndZeroTasks) {
  ThreadPool pool(1);
  int count = 0;
  pool.parallel_for(5, [&](std::size_t) { ++count; });
  pool.parallel_for(0, [&](std::size_t) { ++count; });
  EXPECT_EQ(count, 5);
}

TEST(ThreadPool, AvailableCpusIsPositive) {
  EXPECT_GE(available_cpus(), 1U);
}

}  // namespace
}  // namespace warden

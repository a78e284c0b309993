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

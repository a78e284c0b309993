#include "core/thread_pool.hpp"

#include <sched.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace warden {

namespace {

thread_local bool t_inside_task = false;

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

// CPUs allowed by a cgroup quota, or 0 when there is no limit.
std::size_t cgroup_cpu_limit() {
  {  // cgroup v2: "max 100000" or "<quota> <period>"
    std::ifstream in("/sys/fs/cgroup/cpu.max");
    std::string quota;
    long long period = 0;
    if (in >> quota >> period && quota != "max" && period > 0) {
      const double cpus = std::stod(quota) / static_cast<double>(period);
      return static_cast<std::size_t>(std::max(1.0, std::ceil(cpus)));
    }
  }
  {  // cgroup v1
    std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    std::ifstream p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    long long quota = 0;
    long long period = 0;
    if (q >> quota && p >> period && quota > 0 && period > 0) {
      return static_cast<std::size_t>(
          std::max(1.0, std::ceil(static_cast<double>(quota) / static_cast<double>(period))));
    }
  }
  return 0;
}

}  // namespace

std::size_t available_cpus() noexcept {
  std::size_t cpus = std::thread::hardware_concurrency();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    cpus = static_cast<std::size_t>(CPU_COUNT(&set));
  }
  try {
    const std::size_t limit = cgroup_cpu_limit();
    if (limit > 0 && limit < cpus) cpus = limit;
  } catch (...) {  // an unreadable cgroup file is no limit
  }
  return cpus == 0 ? 1 : cpus;
}

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) threads = available_cpus();
  workers_.reserve(threads - 1);
  for (std::size_t i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    const std::lock_guard lock(mutex_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {

constexpr unsigned kIndexBits = 16;
constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kIndexBits) - 1;
constexpr std::size_t kMaxTasksPerJob = kIndexMask;

// A wait for the workers' tasks counts as a stall when it is longer than both this and a few
// times the caller's own share of the job: a task runs in microseconds and tasks are near
// equal (so an uneven split of them costs a task or two), a lost core costs a scheduler slice
// (milliseconds). Measured: waits of 60-250 µs are common on a quiet machine (a 3:1 split of a
// four-task job), and with a busy neighbour the stalls are milliseconds.
constexpr std::int64_t kStallNs = 500'000;
constexpr std::int64_t kStallShare = 4;
// How long jobs then run on the caller alone before the workers are tried again: long enough
// that a stall's cost is a few percent, short enough to get the cores back soon after the
// neighbour is gone.
constexpr std::int64_t kSoloWindowNs = 100'000'000;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr std::uint64_t job_word(std::uint64_t generation, std::uint64_t tasks) {
  return (generation << (2 * kIndexBits)) | (tasks << kIndexBits);
}

}  // namespace

bool ThreadPool::claim(std::uint64_t job, std::size_t& task) noexcept {
  std::uint64_t word = job_.load(std::memory_order_acquire);
  for (;;) {
    const std::uint64_t index = word & kIndexMask;
    const std::uint64_t tasks = (word >> kIndexBits) & kIndexMask;
    if ((word >> (2 * kIndexBits)) != job || index >= tasks) return false;
    if (job_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      task = static_cast<std::size_t>(index);
      return true;
    }
  }
}

void ThreadPool::run_tasks(std::uint64_t job) {
  const bool was_inside = t_inside_task;
  t_inside_task = true;
  std::size_t task = 0;
  std::size_t finished = 0;
  while (claim(job, task)) {
    fn_(ctx_, task);
    ++finished;
  }
  if (finished != 0) done_.fetch_add(finished, std::memory_order_acq_rel);
  t_inside_task = was_inside;
}

void ThreadPool::run(std::size_t tasks, TaskFn fn, void* ctx) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1 || t_inside_task) {
    for (std::size_t i = 0; i < tasks; ++i) fn(ctx, i);
    return;
  }
  if (tasks > kMaxTasksPerJob) {  // more than one word counts: in slices
    for (std::size_t first = 0; first < tasks; first += kMaxTasksPerJob) {
      const std::size_t count = std::min(kMaxTasksPerJob, tasks - first);
      struct Slice {
        TaskFn fn;
        void* ctx;
        std::size_t first;
      } slice{fn, ctx, first};
      run(
          count,
          [](void* s, std::size_t i) {
            const auto* sl = static_cast<const Slice*>(s);
            sl->fn(sl->ctx, sl->first + i);
          },
          &slice);
    }
    return;
  }
  const std::lock_guard run_lock(run_mutex_);
  const std::int64_t start = now_ns();
  if (start < solo_until_ns_.load(std::memory_order_relaxed)) {
    const bool was_inside = t_inside_task;
    t_inside_task = true;
    for (std::size_t i = 0; i < tasks; ++i) fn(ctx, i);
    t_inside_task = was_inside;
    return;
  }
  std::uint64_t job = 0;
  {
    const std::lock_guard lock(mutex_);
    fn_ = fn;
    ctx_ = ctx;
    done_.store(0, std::memory_order_relaxed);
    job =
        (generation_.load(std::memory_order_relaxed) + 1) & ((std::uint64_t{1} << (64 - 2 * kIndexBits)) - 1);
    job_.store(job_word(job, tasks), std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  run_tasks(job);
  // Wait for the tasks the workers took (the rest this thread did). Spin first (a task is
  // normally microseconds from done), then yield: a worker that lost its core mid-task needs
  // the core back, and spinning would only delay that.
  if (done_.load(std::memory_order_acquire) == tasks) return;
  const std::int64_t worked = now_ns();
  for (unsigned spins = 0; done_.load(std::memory_order_acquire) != tasks; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  const std::int64_t end = now_ns();
  if (end - worked > std::max(kStallNs, kStallShare * (worked - start))) {
    solo_until_ns_.store(end + kSoloWindowNs, std::memory_order_relaxed);
  }
}

std::size_t ThreadPool::threads_now() const noexcept {
  if (workers_.empty() || now_ns() < solo_until_ns_.load(std::memory_order_relaxed)) return 1;
  return size();
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    // Spin for a while (~50 µs) before sleeping: jobs come in quick succession.
    std::uint64_t current = generation_.load(std::memory_order_acquire);
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (current == seen && std::chrono::steady_clock::now() < spin_until) {
      for (int i = 0; i < 64; ++i) cpu_relax();
      current = generation_.load(std::memory_order_acquire);
    }
    if (current == seen) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      current = generation_.load(std::memory_order_acquire);
    }
    seen = current;
    if (stop_.load(std::memory_order_acquire)) return;
    // The job this generation posted (or a newer one: then claim() finds nothing and the
    // worker waits for the next generation).
    run_tasks(job_.load(std::memory_order_acquire) >> (2 * kIndexBits));
  }
}

}  // namespace warden

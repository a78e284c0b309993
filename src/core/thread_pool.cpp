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

void ThreadPool::work_on_current_job() {
  const bool was_inside = t_inside_task;
  t_inside_task = true;
  for (;;) {
    const std::size_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= tasks_) break;
    fn_(ctx_, task);
  }
  t_inside_task = was_inside;
}

void ThreadPool::run(std::size_t tasks, TaskFn fn, void* ctx) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1 || t_inside_task) {
    for (std::size_t i = 0; i < tasks; ++i) fn(ctx, i);
    return;
  }
  const std::lock_guard run_lock(run_mutex_);
  {
    const std::lock_guard lock(mutex_);
    fn_ = fn;
    ctx_ = ctx;
    tasks_ = tasks;
    next_task_.store(0, std::memory_order_relaxed);
    pending_workers_.store(workers_.size(), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  work_on_current_job();
  // Every task was taken by a thread that finishes it before leaving the job, so the job
  // is done when every worker has left it.
  // Spin first (the workers are normally a few microseconds behind), then yield: on a
  // machine shared with other processes a worker may have lost its core, and spinning
  // would only keep it from getting it back.
  for (unsigned spins = 0; pending_workers_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
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
    work_on_current_job();
    pending_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace warden

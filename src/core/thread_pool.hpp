#pragma once
// A persistent pool of compute threads. parallel_for hands out task indices through one
// atomic counter, so uneven tasks (attention over sequences of different lengths) balance
// themselves; the calling thread works too, so a pool of N threads has N-1 workers.
// Workers spin briefly before sleeping: a forward pass issues many parallel_for calls
// back to back, and waking a sleeping thread costs more than a short spin.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace warden {

// Compute threads this process may use: the CPUs in its affinity mask, lowered by a
// cgroup (v2 cpu.max or v1 cfs quota) limit, at least 1.
std::size_t available_cpus() noexcept;

class ThreadPool {
 public:
  // threads == 0 means available_cpus().
  explicit ThreadPool(std::size_t threads = 0);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  [[nodiscard]] std::size_t size() const noexcept { return workers_.size() + 1; }

  // Runs fn(task) for every task in [0, tasks) and returns when all are done. fn must not
  // throw. Calls from inside a task run serially on the calling thread.
  template <typename Fn>
  void parallel_for(std::size_t tasks, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    run(
        tasks, [](void* ctx, std::size_t task) { (*static_cast<F*>(ctx))(task); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using TaskFn = void (*)(void*, std::size_t);
  void run(std::size_t tasks, TaskFn fn, void* ctx);
  void worker_loop();
  void work_on_current_job();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  // The current job.
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::size_t tasks_ = 0;
  std::atomic<std::size_t> next_task_{0};
  // Workers that have not yet finished with the current job. run() returns only when it
  // is zero, so no worker can still be reading a job when the next one is posted.
  std::atomic<std::size_t> pending_workers_{0};
  std::mutex run_mutex_;  // one job at a time
};

}  // namespace warden

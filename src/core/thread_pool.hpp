#pragma once
// A persistent pool of compute threads. parallel_for hands out task indices through one
// atomic word, so uneven tasks (attention over sequences of different lengths) balance
// themselves; the calling thread works too, so a pool of N threads has N-1 workers.
// Workers spin briefly before sleeping: a forward pass issues many parallel_for calls
// back to back, and waking a sleeping thread costs more than a short spin.
//
// The caller waits only for tasks that were taken, never for a worker to show up: on a host
// where another process keeps a core busy, a worker that has lost its core takes nothing,
// and the calling thread does all the work instead of waiting a scheduler slice for it.
// A worker can still lose its core in the middle of a task; when the caller has waited for
// one much longer than it worked itself (a stall), the pool runs its jobs on the caller alone
// for a while (kSoloWindow) and then tries its workers again: with a busy neighbour, N threads
// are then no slower than one (docs/benchmarks.md, "A busy neighbour").

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
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
  // The threads a job posted now would run on: size(), or 1 while the pool runs jobs on the
  // caller alone after a stall. Callers that cut work into tasks per thread cut by this.
  [[nodiscard]] std::size_t threads_now() const noexcept;

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

  // Takes the next task of job `job` (a generation); false when it has none left or a newer
  // job has been posted.
  bool claim(std::uint64_t job, std::size_t& task) noexcept;
  void run_tasks(std::uint64_t job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  // The current job: generation (high 32 bits), task count (next 16) and next task index (low
  // 16) in one word, so that a task is taken by one compare-and-swap that also proves it
  // belongs to the job the thread read: a worker running late can never take a task of a
  // newer job under an older one's count. fn_ and ctx_ stay valid while any task of their job
  // is unfinished (run() waits for all of them), and a thread reads them only after taking one.
  std::atomic<std::uint64_t> job_{0};
  std::atomic<std::size_t> done_{0};  // tasks of the current job finished
  // Until when jobs run on the caller alone after a stall (steady clock, nanoseconds).
  std::atomic<std::int64_t> solo_until_ns_{0};
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::mutex run_mutex_;  // one job at a time
};

// fn(task) for every task in [0, tasks): on `pool` when there is one, else serially on the
// calling thread.
template <typename Fn>
void parallel_for(ThreadPool* pool, std::size_t tasks, Fn&& fn) {
  if (pool != nullptr) {
    pool->parallel_for(tasks, fn);
  } else {
    for (std::size_t t = 0; t < tasks; ++t) fn(t);
  }
}

}  // namespace warden

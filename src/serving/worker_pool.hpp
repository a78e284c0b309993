#pragma once
// A fixed set of threads running posted tasks in FIFO order: the server's tokenization and
// response-formatting workers, so that neither runs on an I/O thread nor delays the
// compute thread. (The engine's kernels use core/thread_pool.hpp, a fork-join pool.)

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace warden::serving {

class WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  // Runs every task already posted, then joins.
  ~WorkerPool();

  // Thread-safe. A task that throws has its exception swallowed (tasks report their own
  // errors); it never takes a worker down.
  void post(std::function<void()> task);
  [[nodiscard]] std::size_t size() const noexcept { return threads_.size(); }

 private:
  void loop();
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace warden::serving

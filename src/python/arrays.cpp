#include "python/arrays.hpp"

#include <atomic>
#include <memory>
#include <utility>

namespace py = pybind11;

namespace warden::python {

namespace {

std::atomic<std::size_t> g_live{0};
std::atomic<std::uintptr_t> g_last{0};

template <typename T>
py::array owned(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  if (values.empty()) return py::array_t<T>(std::move(shape));  // nothing to own
  auto holder = std::make_unique<std::vector<T>>(std::move(values));
  T* data = holder->data();
  g_last.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_relaxed);
  g_live.fetch_add(1, std::memory_order_relaxed);
  // The capsule's destructor runs under the GIL when the array (and every view of it) is gone.
  py::capsule base(holder.get(), [](void* p) {
    delete static_cast<std::vector<T>*>(p);
    g_live.fetch_sub(1, std::memory_order_relaxed);
  });
  holder.release();  // the capsule owns it now
  return py::array_t<T>(std::move(shape), data, base);
}

}  // namespace

py::array owned_floats(std::vector<float>&& values, std::size_t rows, std::size_t cols) {
  if (cols == 0) {
    const auto n = static_cast<py::ssize_t>(values.size());
    return owned(std::move(values), {n});
  }
  return owned(std::move(values), {static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
}

py::array owned_ids(std::vector<std::uint32_t>&& values) {
  const auto n = static_cast<py::ssize_t>(values.size());
  return owned(std::move(values), {n});
}

std::size_t live_buffers() noexcept {
  return g_live.load(std::memory_order_relaxed);
}

std::uintptr_t last_buffer_address() noexcept {
  return g_last.load(std::memory_order_relaxed);
}

}  // namespace warden::python

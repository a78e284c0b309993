#include "python/batches.hpp"

#include <algorithm>
#include <exception>

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/length_order.hpp"

namespace warden::python {

namespace {

unsigned long g_main_thread = 0;  // NOLINT(google-runtime-int): PyThread_get_thread_ident's type

// On the main thread only (where Python delivers signals, and a long call is the one to stop):
// a pending Ctrl-C stops the call between two batches. Other threads skip the GIL here.
void check_interrupt() {
  if (PyThread_get_thread_ident() != g_main_thread) return;
  const pybind11::gil_scoped_acquire held;
  if (PyErr_CheckSignals() != 0) {
    PyErr_Clear();  // raised again, as KeyboardInterrupt, when the call returns (errors.cpp)
    throw Interrupted{};
  }
}

}  // namespace

void note_main_thread() {
  g_main_thread =
      pybind11::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

std::vector<embed::PreparedInput> prepare_all(
    std::size_t count, ThreadPool& pool, std::string_view what,
    const std::function<embed::PreparedInput(std::size_t)>& prepare) {
  std::vector<embed::PreparedInput> prepared(count);
  std::vector<std::exception_ptr> failures(count);
  auto one = [&](std::size_t i) {
    try {
      prepared[i] = prepare(i);
    } catch (...) {
      failures[i] = std::current_exception();
    }
  };
  // One input: no hand-off to the pool's threads (what a single short call costs matters).
  if (count > 1) {
    pool.parallel_for(count, one);
  } else if (count == 1) {
    one(0);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!failures[i]) continue;
    try {
      std::rethrow_exception(failures[i]);
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("{} {}: {}", what, i, e.what()));
    }
  }
  return prepared;
}

void run_batches(std::span<const embed::PreparedInput> inputs, std::size_t batch_size, const BatchFn& run) {
  batch_size = std::max<std::size_t>(1, batch_size);
  const std::vector<std::size_t> order = embed::length_order(inputs);
  std::vector<const embed::PreparedInput*> batch;
  for (std::size_t begin = 0; begin < order.size(); begin += batch_size) {
    check_interrupt();
    const std::size_t end = std::min(order.size(), begin + batch_size);
    batch.clear();
    for (std::size_t k = begin; k < end; ++k) batch.push_back(&inputs[order[k]]);
    run(batch, std::span(order).subspan(begin, end - begin));
  }
}

}  // namespace warden::python

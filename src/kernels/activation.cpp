#include "kernels/activation.hpp"

#include <algorithm>

#include "core/thread_pool.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

void activate_rows(float* x, std::size_t ld, std::size_t rows, std::size_t width, Activation act,
                   ThreadPool* pool) {
  if (act == Activation::None || rows == 0) return;
  constexpr std::size_t kRowsPerTask = 16;
  const auto glu = kernel_table().glu_rows;
  const std::size_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(pool, tasks, [&](std::size_t t) {
    const std::size_t r0 = t * kRowsPerTask;
    float* rows_at = x + r0 * ld;
    glu(rows_at, nullptr, ld, std::min(kRowsPerTask, rows - r0), width, act, rows_at, ld);
  });
}

}  // namespace warden::kernels

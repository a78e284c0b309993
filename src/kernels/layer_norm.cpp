#include "kernels/layer_norm.hpp"

#include <algorithm>
#include <cmath>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

namespace detail {

void layer_norm_rows_portable(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                              std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                              float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = in + r * ld_in;
    float* y = out + r * ld_out;
    float sum = 0.0F;
    for (std::size_t j = 0; j < cols; ++j) sum += x[j];
    const float mean = sum / static_cast<float>(cols);
    float sq = 0.0F;
    for (std::size_t j = 0; j < cols; ++j) sq += (x[j] - mean) * (x[j] - mean);
    const float inv = 1.0F / std::sqrt(sq / static_cast<float>(cols) + eps);
    for (std::size_t j = 0; j < cols; ++j) y[j] = (x[j] - mean) * inv * gamma[j] + beta[j];
  }
}

}  // namespace detail

void layer_norm(const float* in, std::size_t ld_in, float* out, std::size_t ld_out, std::size_t rows,
                std::size_t cols, const float* gamma, const float* beta, float eps, ThreadPool* pool) {
  const auto rows_fn = kernel_table().layer_norm_rows;
  // Blocks of rows big enough to amortise the task hand-out.
  constexpr std::size_t kRowsPerTask = 32;
  const std::size_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  auto run = [&](std::size_t t) {
    const std::size_t r0 = t * kRowsPerTask;
    const std::size_t n = std::min(kRowsPerTask, rows - r0);
    rows_fn(in + r0 * ld_in, ld_in, out + r0 * ld_out, ld_out, n, cols, gamma, beta, eps);
  };
  parallel_for(pool, tasks, run);
}

}  // namespace warden::kernels

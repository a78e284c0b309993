#include "kernels/rms_norm.hpp"

#include <cmath>

#include "core/thread_pool.hpp"

namespace warden::kernels {

namespace {

void rms_row(const float* in, float* out, std::size_t cols, const float* gamma, float eps) {
  float sum = 0.0F;
  for (std::size_t j = 0; j < cols; ++j) sum += in[j] * in[j];
  const float inv = 1.0F / std::sqrt(sum / static_cast<float>(cols) + eps);
  for (std::size_t j = 0; j < cols; ++j) out[j] = gamma[j] * (in[j] * inv);
}

// Rows per task: enough work that a task outweighs its dispatch.
std::size_t rows_per_task(std::size_t cols) {
  return cols >= 1024 ? 16 : 64;
}

}  // namespace

void rms_norm(const float* in, std::size_t ld_in, float* out, std::size_t ld_out, std::size_t rows,
              std::size_t cols, const float* gamma, float eps, ThreadPool* pool) {
  const std::size_t chunk = rows_per_task(cols);
  parallel_for(pool, (rows + chunk - 1) / chunk, [&](std::size_t task) {
    for (std::size_t r = task * chunk; r < rows && r < (task + 1) * chunk; ++r) {
      rms_row(in + r * ld_in, out + r * ld_out, cols, gamma, eps);
    }
  });
}

void rms_norm_heads(float* x, std::size_t ld, std::size_t rows, std::size_t heads, std::size_t head_dim,
                    const float* gamma, float eps, ThreadPool* pool) {
  const std::size_t chunk = rows_per_task(heads * head_dim);
  parallel_for(pool, (rows + chunk - 1) / chunk, [&](std::size_t task) {
    for (std::size_t r = task * chunk; r < rows && r < (task + 1) * chunk; ++r) {
      for (std::size_t h = 0; h < heads; ++h) {
        float* head = x + r * ld + h * head_dim;
        rms_row(head, head, head_dim, gamma, eps);
      }
    }
  });
}

}  // namespace warden::kernels

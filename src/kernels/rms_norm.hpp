#pragma once
// Row-wise RMSNorm (T5's LayerNorm, Llama's and Qwen's norms): y = x / sqrt(mean(x²) + eps) · gamma,
// no mean subtracted and no beta, in float32 as HF's Qwen3RMSNorm computes it (the mean of
// squares, its reciprocal square root, then the weight).

#include <cstddef>

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

// rows x cols; in and out may be the same buffer (in place). Strides ld_in / ld_out.
void rms_norm(const float* in, std::size_t ld_in, float* out, std::size_t ld_out, std::size_t rows,
              std::size_t cols, const float* gamma, float eps, ThreadPool* pool = nullptr);

// In place over each of the first `heads` heads (head_dim values each, one after another from
// column 0) of every row of x (row stride ld), with one gamma of head_dim values for all: Qwen3's
// q_norm / k_norm over each attention head.
void rms_norm_heads(float* x, std::size_t ld, std::size_t rows, std::size_t heads, std::size_t head_dim,
                    const float* gamma, float eps, ThreadPool* pool = nullptr);

}  // namespace warden::kernels

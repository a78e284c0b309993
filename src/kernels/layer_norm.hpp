#pragma once
// Row-wise LayerNorm: y = (x - mean) / sqrt(var + eps) * gamma + beta, with the biased
// variance computed in two passes (mean first) as PyTorch does, for accuracy on rows
// with a large mean. The residual add that precedes it in post-LN blocks is already fused
// into the GEMM epilogue, so this reads each row once more while it is still in cache.

#include <cstddef>

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

// rows x cols; in and out may be the same buffer (in place). Strides ld_in / ld_out.
void layer_norm(const float* in, std::size_t ld_in, float* out, std::size_t ld_out, std::size_t rows,
                std::size_t cols, const float* gamma, const float* beta, float eps,
                ThreadPool* pool = nullptr);

namespace detail {
void layer_norm_rows_portable(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                              std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                              float eps);
void layer_norm_rows_avx2(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                          std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                          float eps);
void layer_norm_rows_avx512(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                            std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                            float eps);
// AArch64 only:
void layer_norm_rows_neon(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                          std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                          float eps);
}  // namespace detail

}  // namespace warden::kernels

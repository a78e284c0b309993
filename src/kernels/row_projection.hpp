#pragma once
// A few dot products per row: out[i][j] = x_i · w_j for r (≤ 8 or so) vectors w_j, each row read
// once. For a projection too narrow for the GEMM, whose panels are 32 columns wide whatever n:
// a rank-4 LoRA adapter's down-projection of a handful of rows.

#include <cstddef>

namespace warden::kernels {

// out[i·ldo + j] = Σ_k x[i·ldx + k] · w[j·k_count + k] for i < rows, j < r (w row-major [r x k]).
void project_rows(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                  std::size_t r, float* out, std::size_t ldo);

namespace detail {
void project_rows_portable(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                           std::size_t r, float* out, std::size_t ldo);
void project_rows_avx2(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                       std::size_t r, float* out, std::size_t ldo);
void project_rows_avx512(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                         std::size_t r, float* out, std::size_t ldo);
}  // namespace detail

}  // namespace warden::kernels

#include "kernels/row_projection.hpp"

#include "kernels/kernel_table.hpp"

namespace warden::kernels {

void project_rows(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                  std::size_t r, float* out, std::size_t ldo) {
  kernel_table().project_rows(x, ldx, rows, k, w, r, out, ldo);
}

namespace detail {

void project_rows_portable(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                           std::size_t r, float* out, std::size_t ldo) {
  for (std::size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    for (std::size_t j = 0; j < r; ++j) {
      const float* wj = w + j * k;
      float sum = 0.0F;
      for (std::size_t t = 0; t < k; ++t) sum += xi[t] * wj[t];
      out[i * ldo + j] = sum;
    }
  }
}

}  // namespace detail

}  // namespace warden::kernels

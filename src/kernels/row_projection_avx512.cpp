#include <immintrin.h>

#include "kernels/row_projection.hpp"

namespace warden::kernels::detail {

void project_rows_avx512(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                         std::size_t r, float* out, std::size_t ldo) {
  for (std::size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    // Four vectors at a time: one load of x feeds four FMAs.
    for (std::size_t j0 = 0; j0 < r; j0 += 4) {
      const std::size_t count = r - j0 < 4 ? r - j0 : 4;
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
      for (std::size_t t = 0; t < k; t += 16) {
        const std::size_t left = k - t;
        const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
        const __m512 xv = _mm512_maskz_loadu_ps(m, xi + t);
        for (std::size_t j = 0; j < count; ++j) {
          acc[j] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, w + (j0 + j) * k + t), acc[j]);
        }
      }
      for (std::size_t j = 0; j < count; ++j) out[i * ldo + j0 + j] = _mm512_reduce_add_ps(acc[j]);
    }
  }
}

}  // namespace warden::kernels::detail

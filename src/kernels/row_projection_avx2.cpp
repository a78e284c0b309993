#include <immintrin.h>

#include "kernels/row_projection.hpp"

namespace warden::kernels::detail {

namespace {

float sum8(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

}  // namespace

void project_rows_avx2(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                       std::size_t r, float* out, std::size_t ldo) {
  for (std::size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    for (std::size_t j0 = 0; j0 < r; j0 += 4) {
      const std::size_t count = r - j0 < 4 ? r - j0 : 4;
      __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
      std::size_t t = 0;
      for (; t + 8 <= k; t += 8) {
        const __m256 xv = _mm256_loadu_ps(xi + t);
        for (std::size_t j = 0; j < count; ++j) {
          acc[j] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w + (j0 + j) * k + t), acc[j]);
        }
      }
      for (std::size_t j = 0; j < count; ++j) {
        float sum = sum8(acc[j]);
        for (std::size_t u = t; u < k; ++u) sum += xi[u] * w[(j0 + j) * k + u];
        out[i * ldo + j0 + j] = sum;
      }
    }
  }
}

}  // namespace warden::kernels::detail

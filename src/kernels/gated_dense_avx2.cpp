#include <math.h>

#include "kernels/gated_dense.hpp"
#include "kernels/gemm_tile.hpp"
#include "kernels/simd_math_avx2.hpp"

namespace warden::kernels::detail {

void glu_rows_avx2(const float* x, const float* gate, std::size_t ldx, std::size_t rows, std::size_t width,
                   Activation act, float* out, std::size_t ldo) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* a = x + r * ldx;
    float* o = out + r * ldo;
    std::size_t j = 0;
    if (gate == nullptr) {
      for (; j + 8 <= width; j += 8) _mm256_storeu_ps(o + j, avx2::activate_ps(_mm256_loadu_ps(a + j), act));
      for (; j < width; ++j) o[j] = activate(a[j], act);
      continue;
    }
    const float* g = gate + r * ldx;
    for (; j + 8 <= width; j += 8) {
      const __m256 v = avx2::activate_ps(_mm256_loadu_ps(a + j), act);
      _mm256_storeu_ps(o + j, _mm256_mul_ps(v, _mm256_loadu_ps(g + j)));
    }
    for (; j < width; ++j) o[j] = activate(a[j], act) * g[j];
  }
}

}  // namespace warden::kernels::detail

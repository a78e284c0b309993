#include <math.h>

#include "kernels/gated_dense.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

void glu_rows_avx512(const float* x, const float* gate, std::size_t ldx, std::size_t rows, std::size_t width,
                     Activation act, float* out, std::size_t ldo) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* a = x + r * ldx;
    const float* g = gate != nullptr ? gate + r * ldx : nullptr;
    float* o = out + r * ldo;
    for (std::size_t j = 0; j < width; j += 16) {
      const std::size_t left = width - j;
      const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
      const __m512 v = avx512::activate_ps(_mm512_maskz_loadu_ps(m, a + j), act);
      _mm512_mask_storeu_ps(o + j, m, g != nullptr ? _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, g + j)) : v);
    }
  }
}

}  // namespace warden::kernels::detail

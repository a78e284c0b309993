#include <math.h>

#include "kernels/layer_norm.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

namespace {

inline __mmask16 tail_mask(std::size_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
}

}  // namespace

void layer_norm_rows_avx512(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                            std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                            float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = in + r * ld_in;
    float* y = out + r * ld_out;
    __m512 s = _mm512_setzero_ps();
    for (std::size_t j = 0; j < cols; j += 16)
      s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(tail_mask(cols - j), x + j));
    const float mean = avx512::hsum_ps(s) / static_cast<float>(cols);
    const __m512 vmean = _mm512_set1_ps(mean);
    __m512 q = _mm512_setzero_ps();
    for (std::size_t j = 0; j < cols; j += 16) {
      const __mmask16 m = tail_mask(cols - j);
      const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + j), vmean);
      q = _mm512_fmadd_ps(d, d, q);
    }
    const float inv = 1.0F / sqrtf(avx512::hsum_ps(q) / static_cast<float>(cols) + eps);
    const __m512 vinv = _mm512_set1_ps(inv);
    for (std::size_t j = 0; j < cols; j += 16) {
      const __mmask16 m = tail_mask(cols - j);
      const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), vmean), vinv);
      const __m512 v =
          _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, gamma + j), _mm512_maskz_loadu_ps(m, beta + j));
      _mm512_mask_storeu_ps(y + j, m, v);
    }
  }
}

}  // namespace warden::kernels::detail

#include <math.h>

#include "kernels/layer_norm.hpp"
#include "kernels/simd_math_avx2.hpp"

namespace warden::kernels::detail {

namespace {

// Lane mask for the first `left` of 8 lanes (all when left >= 8).
inline __m256i tail_mask(std::size_t left) {
  const int n = left >= 8 ? 8 : static_cast<int>(left);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace

void layer_norm_rows_avx2(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                          std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                          float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = in + r * ld_in;
    float* y = out + r * ld_out;
    __m256 s = _mm256_setzero_ps();
    for (std::size_t j = 0; j < cols; j += 8)
      s = _mm256_add_ps(s, _mm256_maskload_ps(x + j, tail_mask(cols - j)));
    const float mean = avx2::hsum_ps(s) / static_cast<float>(cols);
    const __m256 vmean = _mm256_set1_ps(mean);
    __m256 q = _mm256_setzero_ps();
    for (std::size_t j = 0; j < cols; j += 8) {
      const __m256i m = tail_mask(cols - j);
      // Masked-off lanes load 0 and would contribute mean^2: zero them after the subtract.
      const __m256 d =
          _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + j, m), vmean), _mm256_castsi256_ps(m));
      q = _mm256_fmadd_ps(d, d, q);
    }
    const float inv = 1.0F / sqrtf(avx2::hsum_ps(q) / static_cast<float>(cols) + eps);
    const __m256 vinv = _mm256_set1_ps(inv);
    for (std::size_t j = 0; j < cols; j += 8) {
      const __m256i m = tail_mask(cols - j);
      const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + j, m), vmean), vinv);
      _mm256_maskstore_ps(
          y + j, m, _mm256_fmadd_ps(d, _mm256_maskload_ps(gamma + j, m), _mm256_maskload_ps(beta + j, m)));
    }
  }
}

}  // namespace warden::kernels::detail

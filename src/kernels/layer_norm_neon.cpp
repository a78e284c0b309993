// NEON LayerNorm, the AVX-512 version's structure: two passes for mean and variance, then
// one for the scaled, shifted output. The sums run in two accumulators (a 4-wide add
// chain alone waits on the add latency every step). A row's tail of fewer than 4 floats
// is read and written through a small buffer (NEON has no masked loads), zero-filled so
// that it adds nothing to the sums.

#include <math.h>

#include "kernels/layer_norm.hpp"
#include "kernels/simd_math_neon.hpp"

namespace warden::kernels::detail {

namespace {

float row_sum(const float* x, std::size_t cols) {
  float32x4_t s0 = vdupq_n_f32(0.0F);
  float32x4_t s1 = vdupq_n_f32(0.0F);
  std::size_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    s0 = vaddq_f32(s0, vld1q_f32(x + j));
    s1 = vaddq_f32(s1, vld1q_f32(x + j + 4));
  }
  for (; j < cols; j += 4) s0 = vaddq_f32(s0, neon::load_partial(x + j, cols - j));
  return vaddvq_f32(vaddq_f32(s0, s1));
}

// Sum of (x - mean)^2.
float row_squares(const float* x, std::size_t cols, float mean) {
  const float32x4_t vmean = vdupq_n_f32(mean);
  float32x4_t q0 = vdupq_n_f32(0.0F);
  float32x4_t q1 = vdupq_n_f32(0.0F);
  std::size_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    const float32x4_t d0 = vsubq_f32(vld1q_f32(x + j), vmean);
    const float32x4_t d1 = vsubq_f32(vld1q_f32(x + j + 4), vmean);
    q0 = vfmaq_f32(q0, d0, d0);
    q1 = vfmaq_f32(q1, d1, d1);
  }
  for (; j < cols; j += 4) {
    const std::size_t left = cols - j;
    float32x4_t d = vsubq_f32(neon::load_partial(x + j, left), vmean);
    // Padding lanes hold 0 - mean: mask them out.
    d = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(d), neon::lane_mask(left)));
    q0 = vfmaq_f32(q0, d, d);
  }
  return vaddvq_f32(vaddq_f32(q0, q1));
}

}  // namespace

void layer_norm_rows_neon(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                          std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                          float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = in + r * ld_in;
    float* y = out + r * ld_out;
    const float mean = row_sum(x, cols) / static_cast<float>(cols);
    const float inv = 1.0F / sqrtf(row_squares(x, cols, mean) / static_cast<float>(cols) + eps);
    const float32x4_t vmean = vdupq_n_f32(mean);
    const float32x4_t vinv = vdupq_n_f32(inv);
    for (std::size_t j = 0; j < cols; j += 4) {
      const std::size_t left = cols - j;
      const float32x4_t d = vmulq_f32(vsubq_f32(neon::load_partial(x + j, left), vmean), vinv);
      const float32x4_t v =
          vfmaq_f32(neon::load_partial(beta + j, left), d, neon::load_partial(gamma + j, left));
      neon::store_partial(y + j, v, left);
    }
  }
}

}  // namespace warden::kernels::detail

// AVX-512 attention for one (sequence, head). K is first transposed into scratch as
// [head_dim][len] so that a query's scores against 64 keys at a time are 4 zmm FMAs per
// head dimension; softmax uses the vector exp; P·V accumulates whole value rows.

#include <math.h>

#include "kernels/attention.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

namespace {

inline __mmask16 tail_mask(std::size_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
}

}  // namespace

void attend_head_avx512(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                        std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch) {
  const std::size_t len_pad = (len + 15) / 16 * 16;
  float* kt = scratch;                     // [head_dim][len_pad]
  float* scores = scratch + head_dim * len_pad;  // [len_pad]
  for (std::size_t j = 0; j < len; ++j) {
    const float* kj = k + j * ld;
    for (std::size_t d = 0; d < head_dim; ++d) kt[d * len_pad + j] = kj[d];
  }
  for (std::size_t d = 0; d < head_dim; ++d) {
    for (std::size_t j = len; j < len_pad; ++j) kt[d * len_pad + j] = 0.0F;
  }
  const __m512 vscale = _mm512_set1_ps(scale);

  for (std::size_t i = 0; i < len; ++i) {
    const float* qi = q + i * ld;
    // Scores, 64 keys per pass while possible.
    std::size_t j0 = 0;
    for (; j0 + 64 <= len_pad; j0 += 64) {
      __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
             a3 = _mm512_setzero_ps();
      for (std::size_t d = 0; d < head_dim; ++d) {
        const __m512 qd = _mm512_set1_ps(qi[d]);
        const float* row = kt + d * len_pad + j0;
        a0 = _mm512_fmadd_ps(qd, _mm512_loadu_ps(row), a0);
        a1 = _mm512_fmadd_ps(qd, _mm512_loadu_ps(row + 16), a1);
        a2 = _mm512_fmadd_ps(qd, _mm512_loadu_ps(row + 32), a2);
        a3 = _mm512_fmadd_ps(qd, _mm512_loadu_ps(row + 48), a3);
      }
      _mm512_storeu_ps(scores + j0, _mm512_mul_ps(a0, vscale));
      _mm512_storeu_ps(scores + j0 + 16, _mm512_mul_ps(a1, vscale));
      _mm512_storeu_ps(scores + j0 + 32, _mm512_mul_ps(a2, vscale));
      _mm512_storeu_ps(scores + j0 + 48, _mm512_mul_ps(a3, vscale));
    }
    for (; j0 < len_pad; j0 += 16) {
      __m512 a0 = _mm512_setzero_ps();
      for (std::size_t d = 0; d < head_dim; ++d) {
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(qi[d]), _mm512_loadu_ps(kt + d * len_pad + j0), a0);
      }
      _mm512_storeu_ps(scores + j0, _mm512_mul_ps(a0, vscale));
    }
    // Softmax over the real keys only.
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    for (std::size_t j = 0; j < len; j += 16) {
      vmax = _mm512_mask_max_ps(vmax, tail_mask(len - j), vmax, _mm512_loadu_ps(scores + j));
    }
    const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
    __m512 vsum = _mm512_setzero_ps();
    for (std::size_t j = 0; j < len; j += 16) {
      const __mmask16 m = tail_mask(len - j);
      const __m512 e = _mm512_maskz_mov_ps(m, avx512::exp_ps(_mm512_sub_ps(_mm512_loadu_ps(scores + j), mx)));
      _mm512_storeu_ps(scores + j, e);
      vsum = _mm512_add_ps(vsum, e);
    }
    const float inv = 1.0F / _mm512_reduce_add_ps(vsum);
    // out_i = sum_j p_j v_j, head_dim in chunks of 16 (masked tail).
    float* o = out + i * ld_out;
    for (std::size_t d0 = 0; d0 < head_dim; d0 += 64) {
      const std::size_t width = head_dim - d0 < 64 ? head_dim - d0 : 64;
      const __mmask16 m0 = tail_mask(width), m1 = width > 16 ? tail_mask(width - 16) : 0,
                      m2 = width > 32 ? tail_mask(width - 32) : 0, m3 = width > 48 ? tail_mask(width - 48) : 0;
      __m512 o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps(), o2 = _mm512_setzero_ps(),
             o3 = _mm512_setzero_ps();
      for (std::size_t j = 0; j < len; ++j) {
        const __m512 p = _mm512_set1_ps(scores[j]);
        const float* vj = v + j * ld + d0;
        o0 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m0, vj), o0);
        if (m1 != 0) o1 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m1, vj + 16), o1);
        if (m2 != 0) o2 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m2, vj + 32), o2);
        if (m3 != 0) o3 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m3, vj + 48), o3);
      }
      const __m512 vinv = _mm512_set1_ps(inv);
      _mm512_mask_storeu_ps(o + d0, m0, _mm512_mul_ps(o0, vinv));
      if (m1 != 0) _mm512_mask_storeu_ps(o + d0 + 16, m1, _mm512_mul_ps(o1, vinv));
      if (m2 != 0) _mm512_mask_storeu_ps(o + d0 + 32, m2, _mm512_mul_ps(o2, vinv));
      if (m3 != 0) _mm512_mask_storeu_ps(o + d0 + 48, m3, _mm512_mul_ps(o3, vinv));
    }
  }
}

}  // namespace warden::kernels::detail

#pragma once
// Vectorised exp and erf for AVX2+FMA, included only by *_avx2.cpp files. Same
// polynomials as simd_math_avx512.hpp; internal linkage for the same reason.

#include <immintrin.h>

#include <cmath>

#include "kernels/activation.hpp"

namespace warden::kernels::avx2 {
namespace {

inline __m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3F)), _mm256_set1_ps(88.3F));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341F)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375F), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4F), r);
  __m256 p = _mm256_set1_ps(1.9875691500E-4F);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1F));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1F));
  const __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0F)));
  // 2^n built in the exponent field; n is within [-126, 127] after the clamp above.
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

inline __m256 erf_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-4.0F)), _mm256_set1_ps(4.0F));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-2.72614225801306e-10F);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.77068142495902e-08F));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-2.10102402082508e-06F));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-5.69250639462346e-05F));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-7.34990630326855e-04F));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-2.95459980854025e-03F));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.60960333262415e-02F));
  p = _mm256_mul_ps(p, x);
  __m256 q = _mm256_set1_ps(-1.45660718464996e-05F);
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-2.13374055278905e-04F));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-1.68282697438203e-03F));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-7.37332916720468e-03F));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-1.42647390514189e-02F));
  return _mm256_div_ps(p, q);
}

inline __m256 gelu_ps(__m256 x) {
  const __m256 e = erf_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752F)));
  return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5F)), _mm256_add_ps(e, _mm256_set1_ps(1.0F)));
}

// SiLU: x / (1 + exp(-x)).
inline __m256 silu_ps(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0F);
  return _mm256_div_ps(x, _mm256_add_ps(one, exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// The tanh-approximated GELU, as x / (1 + exp(-2u)) with u = √(2/π)·(x + 0.044715·x³) (see the
// AVX-512 version).
inline __m256 gelu_tanh_ps(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u = _mm256_mul_ps(_mm256_fmadd_ps(x3, _mm256_set1_ps(0.044715F), x),
                                 _mm256_set1_ps(-2.0F * 0.7978845608028654F));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0F), exp_ps(u)));
}

// A dense layer's activation on 8 lanes, as the epilogues apply it. Tanh (classification
// heads only: one row per sequence) goes through the scalar tanhf.
inline __m256 activate_ps(__m256 v, Activation act) {
  switch (act) {
    case Activation::Gelu:
      return gelu_ps(v);
    case Activation::Relu:
      return _mm256_max_ps(v, _mm256_setzero_ps());
    case Activation::Silu:
      return silu_ps(v);
    case Activation::GeluTanh:
      return gelu_tanh_ps(v);
    case Activation::Tanh: {
      float lanes[8];
      _mm256_storeu_ps(lanes, v);
      for (float& x : lanes) x = ::tanhf(x);
      return _mm256_loadu_ps(lanes);
    }
    case Activation::None:
      break;
  }
  return v;
}

inline float hsum_ps(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 s2 = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

}  // namespace
}  // namespace warden::kernels::avx2

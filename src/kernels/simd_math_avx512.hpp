#pragma once
// Vectorised exp and erf for AVX-512, included only by *_avx512.cpp files (which are
// compiled with AVX-512 enabled). Everything here has internal linkage so that no
// AVX-512 code can be picked by the linker for a caller on another CPU.

#include <immintrin.h>

#include <cmath>

#include "kernels/activation.hpp"

namespace warden::kernels::avx512 {
namespace {

// exp(x) for float32, max relative error about 2 ulp (Cephes' expf polynomial after the
// usual range reduction x = n·ln2 + r, |r| <= ln2/2; 2^n applied with vscalefps, which
// also gives 0 and +inf at the ends of the range).
inline __m512 exp_ps(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0F)), _mm512_set1_ps(88.7F));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341F)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375F), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4F), r);
  __m512 p = _mm512_set1_ps(1.9875691500E-4F);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507E-3F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073E-3F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894E-2F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459E-1F));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201E-1F));
  const __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0F)));
  return _mm512_scalef_ps(p, n);
}

// erf(x) for float32 as a rational function of x on [-4, 4] (erf is ±1 in float32
// beyond), max absolute error a few 1e-7.
inline __m512 erf_ps(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-4.0F)), _mm512_set1_ps(4.0F));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-2.72614225801306e-10F);
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(2.77068142495902e-08F));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-2.10102402082508e-06F));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-5.69250639462346e-05F));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-7.34990630326855e-04F));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-2.95459980854025e-03F));
  p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-1.60960333262415e-02F));
  p = _mm512_mul_ps(p, x);
  __m512 q = _mm512_set1_ps(-1.45660718464996e-05F);
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-2.13374055278905e-04F));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-1.68282697438203e-03F));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-7.37332916720468e-03F));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-1.42647390514189e-02F));
  return _mm512_div_ps(p, q);
}

// Exact (erf) GELU: x/2 · (1 + erf(x/√2)).
inline __m512 gelu_ps(__m512 x) {
  const __m512 e = erf_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752F)));
  return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5F)), _mm512_add_ps(e, _mm512_set1_ps(1.0F)));
}

// SiLU: x / (1 + exp(-x)).
inline __m512 silu_ps(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0F);
  return _mm512_div_ps(x, _mm512_add_ps(one, exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// The tanh-approximated GELU, as x·sigmoid(2u) = x / (1 + exp(-2u)) with u = √(2/π)·(x + 0.044715·x³)
// (the same function as x/2·(1 + tanh(u)), without a vector tanh).
inline __m512 gelu_tanh_ps(__m512 x) {
  const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  const __m512 u = _mm512_mul_ps(_mm512_fmadd_ps(x3, _mm512_set1_ps(0.044715F), x),
                                 _mm512_set1_ps(-2.0F * 0.7978845608028654F));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0F), exp_ps(u)));
}

// A dense layer's activation on 16 lanes, as the epilogues apply it. Tanh (classification
// heads only: one row per sequence) goes through the scalar tanhf.
inline __m512 activate_ps(__m512 v, Activation act) {
  switch (act) {
    case Activation::Gelu:
      return gelu_ps(v);
    case Activation::Relu:
      return _mm512_max_ps(v, _mm512_setzero_ps());
    case Activation::Silu:
      return silu_ps(v);
    case Activation::GeluTanh:
      return gelu_tanh_ps(v);
    case Activation::Tanh: {
      float lanes[16];
      _mm512_storeu_ps(lanes, v);
      for (float& x : lanes) x = ::tanhf(x);
      return _mm512_loadu_ps(lanes);
    }
    case Activation::None:
      break;
  }
  return v;
}

// Horizontal sum / max by folding halves (GCC 12's _mm512_reduce_* trip -Wuninitialized).
inline float hsum_ps(__m512 v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0x4E));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xB1));
  return _mm512_cvtss_f32(v);
}

inline float hmax_ps(__m512 v) {
  v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
  v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));
  v = _mm512_max_ps(v, _mm512_permute_ps(v, 0x4E));
  v = _mm512_max_ps(v, _mm512_permute_ps(v, 0xB1));
  return _mm512_cvtss_f32(v);
}

}  // namespace
}  // namespace warden::kernels::avx512

#pragma once
// Vectorised exp and erf for AArch64 Advanced SIMD, included only by *_neon.cpp files.
// Same polynomials as simd_math_avx512.hpp. NEON is part of the AArch64 baseline, so no
// wider instruction can leak from here; internal linkage is kept anyway so that every ISA
// header follows one rule (no inline code shared across kernel files).

#include <arm_neon.h>

#include <cstddef>

namespace warden::kernels::neon {
namespace {

// exp(x) for float32, max relative error about 2 ulp: Cephes' expf polynomial after the
// range reduction x = n·ln2 + r, |r| <= ln2/2. The clamp matches the AVX-512 version
// ([-104, 88.7]: n in [-150, 128]), so 2^n is applied as two factors 2^(n/2)·2^(n - n/2),
// each a normal float: results underflow gradually to 0 as vscalefps does instead of
// stopping at FLT_MIN.
inline float32x4_t exp_ps(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-104.0F)), vdupq_n_f32(88.7F));
  const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341F)));
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375F));
  r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4F));
  float32x4_t p = vdupq_n_f32(1.9875691500E-4F);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507E-3F), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073E-3F), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894E-2F), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459E-1F), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201E-1F), p, r);
  const float32x4_t r2 = vmulq_f32(r, r);
  p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0F)), p, r2);
  const int32x4_t ni = vcvtq_s32_f32(n);
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
  return vmulq_f32(vmulq_f32(p, s1), s2);
}

// erf(x) for float32 as a rational function of x on [-4, 4] (erf is ±1 in float32
// beyond), max absolute error a few 1e-7.
inline float32x4_t erf_ps(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-4.0F)), vdupq_n_f32(4.0F));
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t p = vdupq_n_f32(-2.72614225801306e-10F);
  p = vfmaq_f32(vdupq_n_f32(2.77068142495902e-08F), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-2.10102402082508e-06F), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-5.69250639462346e-05F), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-7.34990630326855e-04F), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-2.95459980854025e-03F), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-1.60960333262415e-02F), p, x2);
  p = vmulq_f32(p, x);
  float32x4_t q = vdupq_n_f32(-1.45660718464996e-05F);
  q = vfmaq_f32(vdupq_n_f32(-2.13374055278905e-04F), q, x2);
  q = vfmaq_f32(vdupq_n_f32(-1.68282697438203e-03F), q, x2);
  q = vfmaq_f32(vdupq_n_f32(-7.37332916720468e-03F), q, x2);
  q = vfmaq_f32(vdupq_n_f32(-1.42647390514189e-02F), q, x2);
  return vdivq_f32(p, q);
}

// Exact (erf) GELU: x/2 · (1 + erf(x/√2)).
inline float32x4_t gelu_ps(float32x4_t x) {
  const float32x4_t e = erf_ps(vmulq_f32(x, vdupq_n_f32(0.70710678118654752F)));
  return vmulq_f32(vmulq_f32(x, vdupq_n_f32(0.5F)), vaddq_f32(e, vdupq_n_f32(1.0F)));
}

// NEON has no masked loads or stores: a tail of `count` < 4 floats goes through a small
// zero-filled buffer, so nothing past the end of a row is read or written.
// SiLU: x / (1 + exp(-x)).
inline float32x4_t silu_ps(float32x4_t x) {
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0F), exp_ps(vnegq_f32(x))));
}

// The tanh-approximated GELU, as x / (1 + exp(-2u)) with u = √(2/π)·(x + 0.044715·x³).
inline float32x4_t gelu_tanh_ps(float32x4_t x) {
  const float32x4_t x3 = vmulq_f32(vmulq_f32(x, x), x);
  const float32x4_t u =
      vmulq_f32(vfmaq_f32(x, x3, vdupq_n_f32(0.044715F)), vdupq_n_f32(-2.0F * 0.7978845608028654F));
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0F), exp_ps(u)));
}

inline float32x4_t load_partial(const float* p, std::size_t count) {
  if (count >= 4) return vld1q_f32(p);
  float buf[4] = {0.0F, 0.0F, 0.0F, 0.0F};
  for (std::size_t i = 0; i < count; ++i) buf[i] = p[i];
  return vld1q_f32(buf);
}

inline void store_partial(float* p, float32x4_t v, std::size_t count) {
  if (count >= 4) {
    vst1q_f32(p, v);
    return;
  }
  float buf[4];
  vst1q_f32(buf, v);
  for (std::size_t i = 0; i < count; ++i) p[i] = buf[i];
}

// All-ones in the lanes below `count`, zero above: selects the valid lanes of a tail.
inline uint32x4_t lane_mask(std::size_t count) {
  const uint32_t idx[4] = {0, 1, 2, 3};
  const uint32_t n = count >= 4 ? 4U : static_cast<uint32_t>(count);
  return vcltq_u32(vld1q_u32(idx), vdupq_n_u32(n));
}

}  // namespace
}  // namespace warden::kernels::neon

// AVX-512 packing of A for the 12-row micro-kernel: 12 rows x 16 k values are loaded as
// 12 vectors (4 zero vectors make it 16 x 16), transposed in registers, and stored as 16
// k-rows of 12 floats. The scalar loop this replaces moved one float per instruction pair
// and cost ~8% of a large GEMM. The weights' panels are packed at load the same way (32 rows
// of W become 32 columns of a panel), which had been a fifth of a process's cold start.

#include "kernels/gemm_tile.hpp"

#include <immintrin.h>

namespace warden::kernels::detail {

namespace {

inline __mmask16 tail_mask(std::size_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
}

// In-register transpose of a 16 x 16 block of floats: afterwards r[j] holds column j.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  __m512 u[16];
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // u[4i + j] holds, in each 128-bit lane L, column (4L + j) of rows 4i..4i+3.
  __m512 v[16];
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      v[8 * i + j] = _mm512_shuffle_f32x4(u[8 * i + j], u[8 * i + 4 + j], 0x88);
      v[8 * i + 4 + j] = _mm512_shuffle_f32x4(u[8 * i + j], u[8 * i + 4 + j], 0xDD);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(v[j], v[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(v[j], v[8 + j], 0xDD);
  }
}

}  // namespace

void pack_a_avx512(const float* a, std::size_t lda, std::size_t rows, std::size_t kc, float* out) {
  constexpr std::size_t MR = kAvx512MR;
  for (std::size_t r0 = 0; r0 < rows; r0 += MR) {
    const std::size_t tile_rows = rows - r0 < MR ? rows - r0 : MR;
    const float* src = a + r0 * lda;
    for (std::size_t k0 = 0; k0 < kc; k0 += 16) {
      const __mmask16 m = tail_mask(kc - k0);
      __m512 r[16];
      for (std::size_t i = 0; i < 16; ++i) {
        r[i] = i < tile_rows ? _mm512_maskz_loadu_ps(m, src + i * lda + k0) : _mm512_setzero_ps();
      }
      transpose16(r);
      const std::size_t ks = kc - k0 < 16 ? kc - k0 : 16;
      for (std::size_t k = 0; k < ks; ++k) {
        _mm512_mask_storeu_ps(out + (k0 + k) * MR, __mmask16(0x0FFF), r[k]);
      }
    }
    out += kc * MR;
  }
}

void pack_panel_avx512(const float* w, std::size_t k, float* panel) {
  constexpr std::size_t NR = kAvx512NR;
  for (std::size_t half = 0; half < NR / 16; ++half) {
    const float* src = w + half * 16 * k;
    for (std::size_t k0 = 0; k0 < k; k0 += 16) {
      const __mmask16 m = tail_mask(k - k0);
      __m512 r[16];
      for (std::size_t i = 0; i < 16; ++i) r[i] = _mm512_maskz_loadu_ps(m, src + i * k + k0);
      transpose16(r);
      const std::size_t ks = k - k0 < 16 ? k - k0 : 16;
      for (std::size_t kk = 0; kk < ks; ++kk) _mm512_storeu_ps(panel + (k0 + kk) * NR + half * 16, r[kk]);
    }
  }
}

}  // namespace warden::kernels::detail

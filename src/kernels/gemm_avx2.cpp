// AVX2 micro-kernel: a 6 x 16 tile of C in 12 ymm accumulators (the classic shape for
// 16 vector registers: 12 accumulators, 2 weight vectors, 1 broadcast).

#include <math.h>

#include "kernels/gemm_tile.hpp"
#include "kernels/simd_math_avx2.hpp"

namespace warden::kernels::detail {

namespace {

constexpr int MR = static_cast<int>(kAvx2MR);

// Lane mask for the first `cols` of 8 lanes.
inline __m256i lane_mask(int cols) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), idx);
}

}  // namespace

void tile_avx2(const Tile& t) {
  __m256 acc0[MR];
  __m256 acc1[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    acc0[r] = _mm256_setzero_ps();
    acc1[r] = _mm256_setzero_ps();
  }
  const float* a = t.a;
  const float* b = t.b;
  for (std::size_t k = 0; k < t.kc; ++k) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r);
      acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
    }
    a += MR;
    b += 16;
  }

  const int cols = static_cast<int>(t.cols);
  const __m256i m0 = lane_mask(cols);
  const __m256i m1 = lane_mask(cols - 8);
  __m256 bias0 = _mm256_setzero_ps();
  __m256 bias1 = _mm256_setzero_ps();
  if (t.finish) {
    bias0 = _mm256_maskload_ps(t.bias, m0);
    bias1 = _mm256_maskload_ps(t.bias + 8, m1);
  }
  const int rows = static_cast<int>(t.rows);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
    float* c = t.c + static_cast<std::size_t>(r) * t.ldc;
    __m256 v0 = acc0[r];
    __m256 v1 = acc1[r];
    if (t.accumulate) {
      v0 = _mm256_add_ps(v0, _mm256_maskload_ps(c, m0));
      v1 = _mm256_add_ps(v1, _mm256_maskload_ps(c + 8, m1));
    }
    if (t.finish) {
      v0 = _mm256_add_ps(v0, bias0);
      v1 = _mm256_add_ps(v1, bias1);
      if (t.activation == Activation::Gelu) {
        v0 = avx2::gelu_ps(v0);
        v1 = avx2::gelu_ps(v1);
      } else if (t.activation == Activation::Relu) {
        v0 = _mm256_max_ps(v0, _mm256_setzero_ps());
        v1 = _mm256_max_ps(v1, _mm256_setzero_ps());
      } else if (t.activation == Activation::Silu) {
        v0 = avx2::silu_ps(v0);
        v1 = avx2::silu_ps(v1);
      } else if (t.activation == Activation::GeluTanh) {
        v0 = avx2::gelu_tanh_ps(v0);
        v1 = avx2::gelu_tanh_ps(v1);
      }
      if (t.residual != nullptr && t.activation != Activation::Tanh) {
        const float* res = t.residual + static_cast<std::size_t>(r) * t.ldr;
        v0 = _mm256_add_ps(v0, _mm256_maskload_ps(res, m0));
        v1 = _mm256_add_ps(v1, _mm256_maskload_ps(res + 8, m1));
      }
    }
    _mm256_maskstore_ps(c, m0, v0);
    _mm256_maskstore_ps(c + 8, m1, v1);
    if (t.finish && t.activation == Activation::Tanh) {
      for (std::size_t j = 0; j < t.cols; ++j) {
        c[j] = ::tanhf(c[j]);
        if (t.residual != nullptr) c[j] += t.residual[static_cast<std::size_t>(r) * t.ldr + j];
      }
    }
  }
}

}  // namespace warden::kernels::detail

// AVX-512 micro-kernel: a 12 x 32 tile of C in 24 zmm accumulators. Per k step it loads
// two 16-float vectors of the packed weight panel and broadcasts 12 packed A values:
// 24 FMAs for 14 loads, enough independent chains to keep both FMA pipes busy.

#include <math.h>

#include "kernels/gemm_tile.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

namespace {

constexpr int MR = static_cast<int>(kAvx512MR);
constexpr std::size_t kPrefetchFloats = 32 * 16;  // 16 k-steps (2 KiB) ahead

inline __m512 apply_activation(__m512 v, Activation act) {
  switch (act) {
    case Activation::Gelu:
      return avx512::gelu_ps(v);
    case Activation::Relu:
      return _mm512_max_ps(v, _mm512_setzero_ps());
    case Activation::Silu:
      return avx512::silu_ps(v);
    case Activation::GeluTanh:
      return avx512::gelu_tanh_ps(v);
    default:
      return v;  // Tanh is applied after the store (see below)
  }
}

// The tile for at most R rows (R <= MR): A is packed for MR rows whatever R, so that a short
// remainder tile (the last 4 rows of a 16-token query) does 4 rows of arithmetic, not 12.
template <int R>
void tile_rows(const Tile& t) {
  __m512 acc0[R];
  __m512 acc1[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  const float* a = t.a;
  const float* b = t.b;
  for (std::size_t k = 0; k < t.kc; ++k) {
    // The panel streams from L3 or memory when the rows are few (a short query reads every
    // weight once per row tile): fetch its lines well ahead of use.
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetchFloats), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetchFloats + 16), _MM_HINT_T0);
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
    }
    a += MR;
    b += 32;
  }

  const auto cols = static_cast<unsigned>(t.cols);
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << cols) - 1U);
  const __mmask16 m1 = cols >= 32  ? __mmask16(0xFFFF)
                       : cols > 16 ? __mmask16((1U << (cols - 16)) - 1U)
                                   : __mmask16(0);
  __m512 bias0 = _mm512_setzero_ps();
  __m512 bias1 = _mm512_setzero_ps();
  if (t.finish) {
    bias0 = _mm512_maskz_loadu_ps(m0, t.bias);
    bias1 = _mm512_maskz_loadu_ps(m1, t.bias + 16);
  }
  const int rows = static_cast<int>(t.rows);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
    float* c = t.c + static_cast<std::size_t>(r) * t.ldc;
    __m512 v0 = acc0[r];
    __m512 v1 = acc1[r];
    if (t.accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, c));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, c + 16));
    }
    if (t.finish) {
      v0 = apply_activation(_mm512_add_ps(v0, bias0), t.activation);
      v1 = apply_activation(_mm512_add_ps(v1, bias1), t.activation);
      if (t.residual != nullptr && t.activation != Activation::Tanh) {
        const float* res = t.residual + static_cast<std::size_t>(r) * t.ldr;
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, res));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, res + 16));
      }
    }
    _mm512_mask_storeu_ps(c, m0, v0);
    _mm512_mask_storeu_ps(c + 16, m1, v1);
    if (t.finish && t.activation == Activation::Tanh) {
      // Only classifier heads use tanh, on one row per sequence: scalar is fine here.
      for (std::size_t j = 0; j < t.cols; ++j) {
        c[j] = ::tanhf(c[j]);  // the C function: no inline C++ template in an ISA file
        if (t.residual != nullptr) c[j] += t.residual[static_cast<std::size_t>(r) * t.ldr + j];
      }
    }
  }
}

}  // namespace

void tile_avx512(const Tile& t) {
  if (t.rows <= 4) {
    tile_rows<4>(t);
  } else if (t.rows <= 8) {
    tile_rows<8>(t);
  } else {
    tile_rows<MR>(t);
  }
}

}  // namespace warden::kernels::detail

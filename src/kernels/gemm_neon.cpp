// NEON micro-kernel: an 8 x 12 tile of C in 24 q-register accumulators. Per k step it
// loads three 4-float vectors of the packed weight panel and two vectors holding the 8
// packed A values, then issues 24 FMAs that take their A operand straight from a lane
// (fmla v.4s, v.4s, v.s[i]): no broadcasts, 29 of the 32 registers in use, and 24
// independent chains, enough to cover the FMA latency on every AArch64 core.

#include <math.h>

#include "kernels/gemm_tile.hpp"
#include "kernels/simd_math_neon.hpp"

namespace warden::kernels::detail {

namespace {

constexpr int MR = static_cast<int>(kNeonMR);
constexpr int NV = static_cast<int>(kNeonNR) / 4;  // q-registers per row

// The lane index of vfmaq_laneq_f32 must be an immediate, hence a template per row.
template <int Lane>
inline void fma_row(float32x4_t (&acc)[NV], const float32x4_t (&b)[NV], float32x4_t a) {
  acc[0] = vfmaq_laneq_f32(acc[0], b[0], a, Lane);
  acc[1] = vfmaq_laneq_f32(acc[1], b[1], a, Lane);
  acc[2] = vfmaq_laneq_f32(acc[2], b[2], a, Lane);
}

inline float32x4_t apply_activation(float32x4_t v, Activation act) {
  switch (act) {
    case Activation::Gelu:
      return neon::gelu_ps(v);
    case Activation::Relu:
      return vmaxq_f32(v, vdupq_n_f32(0.0F));
    case Activation::Silu:
      return neon::silu_ps(v);
    case Activation::GeluTanh:
      return neon::gelu_tanh_ps(v);
    default:
      return v;  // Tanh is applied after the store (see below)
  }
}

// Row r of the tile: accumulate onto C, then bias, activation and residual on the
// registers, and one store (partial in the last q-register of a narrow tile).
void finish_row(const Tile& t, std::size_t r, const float* acc, const float32x4_t (&bias)[NV],
                const std::size_t (&count)[NV]) {
  float* c = t.c + r * t.ldc;
  const float* res = t.residual != nullptr ? t.residual + r * t.ldr : nullptr;
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    if (count[v] == 0) continue;
    float32x4_t x = vld1q_f32(acc + 4 * v);
    if (t.accumulate) x = vaddq_f32(x, neon::load_partial(c + 4 * v, count[v]));
    if (t.finish) {
      x = apply_activation(vaddq_f32(x, bias[v]), t.activation);
      if (res != nullptr && t.activation != Activation::Tanh) {
        x = vaddq_f32(x, neon::load_partial(res + 4 * v, count[v]));
      }
    }
    neon::store_partial(c + 4 * v, x, count[v]);
  }
  if (t.finish && t.activation == Activation::Tanh) {
    // Only classifier heads use tanh, on one row per sequence: scalar is fine here.
    for (std::size_t j = 0; j < t.cols; ++j) {
      c[j] = ::tanhf(c[j]);  // the C function, as the x86 kernels call it
      if (res != nullptr) c[j] += res[j];
    }
  }
}

}  // namespace

void tile_neon(const Tile& t) {
  static_assert(MR == 8 && NV == 3, "the k loop below is written out for an 8 x 12 tile");
  float32x4_t acc[MR][NV];
  for (auto& row : acc) {
    for (auto& v : row) v = vdupq_n_f32(0.0F);
  }
  const float* a = t.a;
  const float* b = t.b;
  for (std::size_t k = 0; k < t.kc; ++k) {
    const float32x4_t bv[NV] = {vld1q_f32(b), vld1q_f32(b + 4), vld1q_f32(b + 8)};
    const float32x4_t a0 = vld1q_f32(a);
    const float32x4_t a1 = vld1q_f32(a + 4);
    fma_row<0>(acc[0], bv, a0);
    fma_row<1>(acc[1], bv, a0);
    fma_row<2>(acc[2], bv, a0);
    fma_row<3>(acc[3], bv, a0);
    fma_row<0>(acc[4], bv, a1);
    fma_row<1>(acc[5], bv, a1);
    fma_row<2>(acc[6], bv, a1);
    fma_row<3>(acc[7], bv, a1);
    a += MR;
    b += kNeonNR;
  }
  // The epilogue makes calls (tanhf; finish_row itself when not inlined), and AArch64
  // calls preserve no q-register in full, so the sums go to the stack once, here. Left
  // live in acc across the epilogue, they made GCC spill all 24 accumulators inside the
  // k loop instead, on every step.
  float sums[MR][kNeonNR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) vst1q_f32(sums[r] + 4 * v, acc[r][v]);
  }

  // Columns per q-register: 4, or fewer in the last one of a narrow tile (0 = unused).
  std::size_t count[NV];
  float32x4_t bias[NV];
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    const auto first = static_cast<std::size_t>(4 * v);
    count[v] = t.cols > first ? t.cols - first : 0;
    bias[v] = t.finish && count[v] > 0 ? neon::load_partial(t.bias + first, count[v]) : vdupq_n_f32(0.0F);
  }
  for (std::size_t r = 0; r < t.rows; ++r) finish_row(t, r, sums[r], bias, count);
}

}  // namespace warden::kernels::detail

// NEON attention for one (sequence, head), the AVX-512 version's structure. K is first
// transposed into scratch as [head_dim][len_pad] so that scores against 16 keys are four
// q-register FMAs per head dimension. Queries are processed R = 4 at a time: each K^T or V
// vector loaded from L1 serves R FMAs, and the R x 4 accumulators give enough independent
// chains to hide the FMA latency. Four consecutive q (or p) values are loaded as one
// vector and used lane by lane (fmla by element), so no broadcast is needed.

#include <math.h>

#include "kernels/attention.hpp"
#include "kernels/simd_math_neon.hpp"

namespace warden::kernels::detail {

namespace {

constexpr std::size_t kKeys = 16;  // keys per score block: 4 q-registers per query row

// acc[r][c] += k[c] * qv[r][Lane]: one head dimension of the scores of R rows.
template <int R, int Lane>
inline void score_step(float32x4_t (&acc)[R][4], const float* kt_row, const float32x4_t (&qv)[R]) {
  const float32x4_t k0 = vld1q_f32(kt_row), k1 = vld1q_f32(kt_row + 4), k2 = vld1q_f32(kt_row + 8),
                    k3 = vld1q_f32(kt_row + 12);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    acc[r][0] = vfmaq_laneq_f32(acc[r][0], k0, qv[r], Lane);
    acc[r][1] = vfmaq_laneq_f32(acc[r][1], k1, qv[r], Lane);
    acc[r][2] = vfmaq_laneq_f32(acc[r][2], k2, qv[r], Lane);
    acc[r][3] = vfmaq_laneq_f32(acc[r][3], k3, qv[r], Lane);
  }
}

// scores[r][j] = scale * q_r · k_j for j < keys (a multiple of kKeys; keys past the sequence
// see zero K columns); K^T and the scores have rows len_pad floats apart.
template <int R>
void scores_block(const float* q, std::size_t ld, const float* kt, std::size_t len_pad, std::size_t keys,
                  std::size_t head_dim, float scale, float* scores) {
  const std::size_t dims4 = head_dim / 4 * 4;
  for (std::size_t j0 = 0; j0 < keys; j0 += kKeys) {
    float32x4_t acc[R][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < 4; ++c) acc[r][c] = vdupq_n_f32(0.0F);
    }
    const float* col = kt + j0;
    std::size_t d = 0;
    for (; d < dims4; d += 4) {
      float32x4_t qv[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) qv[r] = vld1q_f32(q + static_cast<std::size_t>(r) * ld + d);
      score_step<R, 0>(acc, col + d * len_pad, qv);
      score_step<R, 1>(acc, col + (d + 1) * len_pad, qv);
      score_step<R, 2>(acc, col + (d + 2) * len_pad, qv);
      score_step<R, 3>(acc, col + (d + 3) * len_pad, qv);
    }
    for (; d < head_dim; ++d) {  // head_dim % 4 trailing dimensions
      float32x4_t qv[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) qv[r] = vdupq_n_f32(q[static_cast<std::size_t>(r) * ld + d]);
      score_step<R, 0>(acc, col + d * len_pad, qv);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      float* s = scores + static_cast<std::size_t>(r) * len_pad + j0;
      for (int c = 0; c < 4; ++c) vst1q_f32(s + 4 * c, vmulq_n_f32(acc[r][c], scale));
    }
  }
}

// In place: exp(s - max) over the first len scores (zero beyond, up to a multiple of 4);
// returns 1 / sum. s holds len_pad >= len rounded up to 4 floats.
float softmax_row(float* s, std::size_t len) {
  const float32x4_t minus_inf = vdupq_n_f32(-INFINITY);
  float32x4_t vmax = minus_inf;
  for (std::size_t j = 0; j < len; j += 4) {
    // Padding keys score 0, which must not win the max: mask them to -inf.
    vmax = vmaxq_f32(vmax, vbslq_f32(neon::lane_mask(len - j), vld1q_f32(s + j), minus_inf));
  }
  const float32x4_t mx = vdupq_n_f32(vmaxvq_f32(vmax));
  float32x4_t vsum = vdupq_n_f32(0.0F);
  for (std::size_t j = 0; j < len; j += 4) {
    const uint32x4_t valid = neon::lane_mask(len - j);
    const float32x4_t e = neon::exp_ps(vsubq_f32(vld1q_f32(s + j), mx));
    const float32x4_t kept = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(e), valid));
    vst1q_f32(s + j, kept);
    vsum = vaddq_f32(vsum, kept);
  }
  return 1.0F / vaddvq_f32(vsum);
}

// acc[r][c] += v[c] * pv[r][Lane]: one key's contribution to R output rows.
template <int R, int NV, int Lane>
inline void pv_step(float32x4_t (&acc)[R][NV], const float* vj, const float32x4_t (&pv)[R]) {
  float32x4_t vv[NV];
#pragma GCC unroll 4
  for (int c = 0; c < NV; ++c) vv[c] = vld1q_f32(vj + 4 * c);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < NV; ++c) acc[r][c] = vfmaq_laneq_f32(acc[r][c], vv[c], pv[r], Lane);
  }
}

// out_r[d0 .. d0 + 4*NV) = inv_r * sum_j p_r[j] v_j.
template <int R, int NV>
void pv_block(const float* scores, std::size_t len_pad, const float* v, std::size_t ld, std::size_t len,
              std::size_t d0, const float* inv, float* out, std::size_t ld_out) {
  float32x4_t acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < NV; ++c) acc[r][c] = vdupq_n_f32(0.0F);
  }
  const float* vcol = v + d0;
  const std::size_t len4 = len / 4 * 4;
  std::size_t j = 0;
  for (; j < len4; j += 4) {
    float32x4_t pv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) pv[r] = vld1q_f32(scores + static_cast<std::size_t>(r) * len_pad + j);
    pv_step<R, NV, 0>(acc, vcol + j * ld, pv);
    pv_step<R, NV, 1>(acc, vcol + (j + 1) * ld, pv);
    pv_step<R, NV, 2>(acc, vcol + (j + 2) * ld, pv);
    pv_step<R, NV, 3>(acc, vcol + (j + 3) * ld, pv);
  }
  for (; j < len; ++j) {  // len % 4 trailing keys (V rows past len belong to others)
    float32x4_t pv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) pv[r] = vdupq_n_f32(scores[static_cast<std::size_t>(r) * len_pad + j]);
    pv_step<R, NV, 0>(acc, vcol + j * ld, pv);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    float* o = out + static_cast<std::size_t>(r) * ld_out + d0;
    for (int c = 0; c < NV; ++c) vst1q_f32(o + 4 * c, vmulq_n_f32(acc[r][c], inv[r]));
  }
}

template <int R>
void pv_rows(const float* scores, std::size_t len_pad, const float* v, std::size_t ld, std::size_t len,
             std::size_t head_dim, const float* inv, float* out, std::size_t ld_out) {
  const std::size_t dims4 = head_dim / 4 * 4;
  for (std::size_t d0 = 0; d0 < dims4; d0 += 16) {
    switch ((dims4 - d0 < 16 ? dims4 - d0 : 16) / 4) {
      case 1:
        pv_block<R, 1>(scores, len_pad, v, ld, len, d0, inv, out, ld_out);
        break;
      case 2:
        pv_block<R, 2>(scores, len_pad, v, ld, len, d0, inv, out, ld_out);
        break;
      case 3:
        pv_block<R, 3>(scores, len_pad, v, ld, len, d0, inv, out, ld_out);
        break;
      default:
        pv_block<R, 4>(scores, len_pad, v, ld, len, d0, inv, out, ld_out);
        break;
    }
  }
  // head_dim % 4 trailing dimensions: scalar (head sizes of real models are multiples of 4).
  for (std::size_t d = dims4; d < head_dim; ++d) {
    for (int r = 0; r < R; ++r) {
      const float* p = scores + static_cast<std::size_t>(r) * len_pad;
      float sum = 0.0F;
      for (std::size_t j = 0; j < len; ++j) sum += p[j] * v[j * ld + d];
      out[static_cast<std::size_t>(r) * ld_out + d] = sum * inv[r];
    }
  }
}

template <int R>
void attend_rows(const float* q, std::size_t ld, const float* kt, const float* v, std::size_t len,
                 std::size_t len_pad, std::size_t head_dim, float scale, float* out, std::size_t ld_out,
                 float* scores, const ScoreBias* bias, std::size_t i0) {
  const KeyRange keys = block_keys(bias, i0, R, len, kKeys);
  scores_block<R>(q, ld, kt + keys.first, len_pad, (keys.count + kKeys - 1) / kKeys * kKeys, head_dim, scale,
                  scores);
  if (bias != nullptr) add_score_bias(*bias, i0, R, scores, len_pad, keys.first, keys.count);
  float inv[R];
  for (int r = 0; r < R; ++r)
    inv[r] = softmax_row(scores + static_cast<std::size_t>(r) * len_pad, keys.count);
  pv_rows<R>(scores, len_pad, v + keys.first * ld, ld, keys.count, head_dim, inv, out, ld_out);
}

}  // namespace

void attend_head_neon(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                      const ScoreBias* bias) {
  constexpr std::size_t kRows = 4;
  const std::size_t len_pad = (len + kKeys - 1) / kKeys * kKeys;
  float* kt = scratch;                           // [head_dim][len_pad]
  float* scores = scratch + head_dim * len_pad;  // [kRows][len_pad]
  for (std::size_t j = 0; j < len; ++j) {
    const float* kj = k + j * ld;
    for (std::size_t d = 0; d < head_dim; ++d) kt[d * len_pad + j] = kj[d];
  }
  for (std::size_t d = 0; d < head_dim; ++d) {
    for (std::size_t j = len; j < len_pad; ++j) kt[d * len_pad + j] = 0.0F;
  }
  std::size_t i = 0;
  for (; i + kRows <= len; i += kRows) {
    attend_rows<4>(q + i * ld, ld, kt, v, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                   bias, i);
  }
  switch (len - i) {
    case 3:
      attend_rows<3>(q + i * ld, ld, kt, v, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                     bias, i);
      break;
    case 2:
      attend_rows<2>(q + i * ld, ld, kt, v, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                     bias, i);
      break;
    case 1:
      attend_rows<1>(q + i * ld, ld, kt, v, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                     bias, i);
      break;
    default:
      break;
  }
}

}  // namespace warden::kernels::detail

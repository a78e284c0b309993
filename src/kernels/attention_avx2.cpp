// AVX2 attention for one (sequence, head): the AVX-512 kernel's structure (K transposed
// into scratch, four query rows per block) at 8 lanes, with blocks sized for 16 ymm
// registers: scores 4 rows x 16 keys, P·V 4 rows x 16 dimensions (8 accumulators each).

#include <math.h>

#include "kernels/attention.hpp"
#include "kernels/simd_math_avx2.hpp"

namespace warden::kernels::detail {

namespace {

inline __m256i tail_mask(std::size_t left) {
  const int n = left >= 8 ? 8 : static_cast<int>(left);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

template <int R>
void scores_block(const float* q, std::size_t ld, const float* kt, std::size_t len_pad, std::size_t keys,
                  std::size_t head_dim, float scale, float* scores) {
  const __m256 vscale = _mm256_set1_ps(scale);
  for (std::size_t j0 = 0; j0 < keys; j0 += 16) {
    __m256 acc[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (std::size_t d = 0; d < head_dim; ++d) {
      const float* row = kt + d * len_pad + j0;
      const __m256 k0 = _mm256_loadu_ps(row);
      const __m256 k1 = _mm256_loadu_ps(row + 8);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256 qd = _mm256_broadcast_ss(q + static_cast<std::size_t>(r) * ld + d);
        acc[r][0] = _mm256_fmadd_ps(qd, k0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(qd, k1, acc[r][1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      float* s = scores + static_cast<std::size_t>(r) * len_pad + j0;
      _mm256_storeu_ps(s, _mm256_mul_ps(acc[r][0], vscale));
      _mm256_storeu_ps(s + 8, _mm256_mul_ps(acc[r][1], vscale));
    }
  }
}

float softmax_row(float* s, std::size_t len) {
  float mx = -INFINITY;
  for (std::size_t j = 0; j < len; ++j) mx = s[j] > mx ? s[j] : mx;
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 vsum = _mm256_setzero_ps();
  for (std::size_t j = 0; j < len; j += 8) {
    const __m256i m = tail_mask(len - j);
    const __m256 e =
        _mm256_and_ps(avx2::exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j), vmx)), _mm256_castsi256_ps(m));
    _mm256_storeu_ps(s + j, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  return 1.0F / avx2::hsum_ps(vsum);
}

template <int R>
void pv_rows(const float* scores, std::size_t len_pad, const float* v, std::size_t ld, std::size_t len,
             std::size_t head_dim, const float* inv, float* out, std::size_t ld_out) {
  for (std::size_t d0 = 0; d0 < head_dim; d0 += 16) {
    const __m256i m0 = tail_mask(head_dim - d0);
    const __m256i m1 = tail_mask(head_dim - d0 > 8 ? head_dim - d0 - 8 : 0);
    __m256 acc[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (std::size_t j = 0; j < len; ++j) {
      const float* vj = v + j * ld + d0;
      const __m256 v0 = _mm256_maskload_ps(vj, m0);
      const __m256 v1 = _mm256_maskload_ps(vj + 8, m1);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256 p = _mm256_broadcast_ss(scores + static_cast<std::size_t>(r) * len_pad + j);
        acc[r][0] = _mm256_fmadd_ps(p, v0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(p, v1, acc[r][1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 vinv = _mm256_set1_ps(inv[r]);
      float* o = out + static_cast<std::size_t>(r) * ld_out + d0;
      _mm256_maskstore_ps(o, m0, _mm256_mul_ps(acc[r][0], vinv));
      _mm256_maskstore_ps(o + 8, m1, _mm256_mul_ps(acc[r][1], vinv));
    }
  }
}

template <int R>
void attend_rows(const float* q, std::size_t ld, const float* kt, const float* v, std::size_t len,
                 std::size_t len_pad, std::size_t head_dim, float scale, float* out, std::size_t ld_out,
                 float* scores, const ScoreBias* bias, std::size_t i0) {
  const KeyRange keys = block_keys(bias, i0, R, len, 16);
  scores_block<R>(q, ld, kt + keys.first, len_pad, (keys.count + 15) / 16 * 16, head_dim, scale, scores);
  if (bias != nullptr) add_score_bias(*bias, i0, R, scores, len_pad, keys.first, keys.count);
  float inv[R];
  for (int r = 0; r < R; ++r)
    inv[r] = softmax_row(scores + static_cast<std::size_t>(r) * len_pad, keys.count);
  pv_rows<R>(scores, len_pad, v + keys.first * ld, ld, keys.count, head_dim, inv, out, ld_out);
}

}  // namespace

void attend_head_avx2(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                      const ScoreBias* bias) {
  const std::size_t len_pad = (len + 15) / 16 * 16;
  float* kt = scratch;
  float* scores = scratch + head_dim * len_pad;
  // Subnormal probabilities of far keys cost a microcode assist each: flushed (see the AVX-512
  // kernel).
  const unsigned int csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040U);
  for (std::size_t j = 0; j < len; ++j) {
    const float* kj = k + j * ld;
    for (std::size_t d = 0; d < head_dim; ++d) kt[d * len_pad + j] = kj[d];
  }
  for (std::size_t d = 0; d < head_dim; ++d) {
    for (std::size_t j = len; j < len_pad; ++j) kt[d * len_pad + j] = 0.0F;
  }
  std::size_t i = 0;
  for (; i + 4 <= len; i += 4) {
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
  _mm_setcsr(csr);
}

}  // namespace warden::kernels::detail

// AVX-512 attention for one (sequence, head). K is first transposed into scratch as
// [head_dim][len] so that scores against 16 keys are one zmm FMA per head dimension.
// Queries are processed R = 4 at a time: each K^T or V vector loaded from L1 then serves R
// FMAs, and the R x (keys or dims) accumulators give enough independent FMA chains to
// hide the FMA latency (one row at a time left the FMA pipes mostly idle).

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <math.h>

#include "kernels/attention.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

namespace {

inline __mmask16 tail_mask(std::size_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
}

// scores[r][j] = scale * q_r · k_j for j < keys (a multiple of 16; keys past the sequence see
// zero K columns); K^T and the scores have rows len_pad floats apart.
template <int R>
void scores_block(const float* q, std::size_t ld, const float* kt, std::size_t len_pad, std::size_t keys,
                  std::size_t head_dim, float scale, float* scores) {
  const __m512 vscale = _mm512_set1_ps(scale);
  std::size_t j0 = 0;
  for (; j0 + 64 <= keys; j0 += 64) {
    __m512 acc[R][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
    }
    for (std::size_t d = 0; d < head_dim; ++d) {
      const float* row = kt + d * len_pad + j0;
      const __m512 k0 = _mm512_loadu_ps(row), k1 = _mm512_loadu_ps(row + 16), k2 = _mm512_loadu_ps(row + 32),
                   k3 = _mm512_loadu_ps(row + 48);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512 qd = _mm512_set1_ps(q[static_cast<std::size_t>(r) * ld + d]);
        acc[r][0] = _mm512_fmadd_ps(qd, k0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(qd, k1, acc[r][1]);
        acc[r][2] = _mm512_fmadd_ps(qd, k2, acc[r][2]);
        acc[r][3] = _mm512_fmadd_ps(qd, k3, acc[r][3]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      float* s = scores + static_cast<std::size_t>(r) * len_pad + j0;
      for (int c = 0; c < 4; ++c) _mm512_storeu_ps(s + 16 * c, _mm512_mul_ps(acc[r][c], vscale));
    }
  }
  for (; j0 < keys; j0 += 16) {
    __m512 acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (std::size_t d = 0; d < head_dim; ++d) {
      const __m512 k0 = _mm512_loadu_ps(kt + d * len_pad + j0);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(q[static_cast<std::size_t>(r) * ld + d]), k0, acc[r]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      _mm512_storeu_ps(scores + static_cast<std::size_t>(r) * len_pad + j0, _mm512_mul_ps(acc[r], vscale));
    }
  }
}

// In place: exp(s - max) over the first len scores (zero beyond); returns 1 / sum.
// The largest of the first len scores, in every lane.
__m512 row_max(const float* s, std::size_t len) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (std::size_t j = 0; j < len; j += 16) {
    vmax = _mm512_mask_max_ps(vmax, tail_mask(len - j), vmax, _mm512_loadu_ps(s + j));
  }
  return _mm512_set1_ps(avx512::hmax_ps(vmax));
}

float softmax_row(float* s, std::size_t len) {
  const __m512 mx = row_max(s, len);
  __m512 vsum = _mm512_setzero_ps();
  for (std::size_t j = 0; j < len; j += 16) {
    const __mmask16 m = tail_mask(len - j);
    const __m512 e = _mm512_maskz_mov_ps(m, avx512::exp_ps(_mm512_sub_ps(_mm512_loadu_ps(s + j), mx)));
    _mm512_storeu_ps(s + j, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  return 1.0F / avx512::hsum_ps(vsum);
}

// out_r[d0 .. d0 + 16*NV) = inv_r * sum_j p_r[j] v_j, the last chunk masked by `last`.
template <int R, int NV>
void pv_block(const float* scores, std::size_t len_pad, const float* v, std::size_t ld, std::size_t len,
              std::size_t d0, __mmask16 last, const float* inv, float* out, std::size_t ld_out) {
  __m512 acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (std::size_t j = 0; j < len; ++j) {
    const float* vj = v + j * ld + d0;
    __m512 vv[NV];
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) {
      vv[c] = _mm512_maskz_loadu_ps(c == NV - 1 ? last : __mmask16(0xFFFF), vj + 16 * c);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 p = _mm512_set1_ps(scores[static_cast<std::size_t>(r) * len_pad + j]);
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_fmadd_ps(p, vv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const __m512 vinv = _mm512_set1_ps(inv[r]);
    float* o = out + static_cast<std::size_t>(r) * ld_out + d0;
    for (int c = 0; c < NV; ++c) {
      _mm512_mask_storeu_ps(o + 16 * c, c == NV - 1 ? last : __mmask16(0xFFFF),
                            _mm512_mul_ps(acc[r][c], vinv));
    }
  }
}

// block(std::integral_constant<int, NV>, d0, last) for the head's dimensions in chunks of
// up to 64: NV vectors of 16, the last one masked by `last` (the P·V blocks' register tiles).
template <class Block>
void for_each_dim_chunk(std::size_t head_dim, Block&& block) {
  for (std::size_t d0 = 0; d0 < head_dim; d0 += 64) {
    const std::size_t width = head_dim - d0 < 64 ? head_dim - d0 : 64;
    const int nv = static_cast<int>((width + 15) / 16);
    const __mmask16 last = tail_mask(width - 16 * static_cast<std::size_t>(nv - 1));
    switch (nv) {
      case 1:
        block(std::integral_constant<int, 1>{}, d0, last);
        break;
      case 2:
        block(std::integral_constant<int, 2>{}, d0, last);
        break;
      case 3:
        block(std::integral_constant<int, 3>{}, d0, last);
        break;
      default:
        block(std::integral_constant<int, 4>{}, d0, last);
        break;
    }
  }
}

template <int R>
void pv_rows(const float* scores, std::size_t len_pad, const float* v, std::size_t ld, std::size_t len,
             std::size_t head_dim, const float* inv, float* out, std::size_t ld_out) {
  for_each_dim_chunk(head_dim, [&](auto nv, std::size_t d0, __mmask16 last) {
    pv_block<R, decltype(nv)::value>(scores, len_pad, v, ld, len, d0, last, inv, out, ld_out);
  });
}

// v: rows of stride head_dim (the contiguous copy).
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
  pv_rows<R>(scores, len_pad, v + keys.first * head_dim, head_dim, keys.count, head_dim, inv, out, ld_out);
}

// Transposes a 16 x 16 block of floats held as 16 row vectors into 16 column vectors.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  __m512 u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Per 128-bit lane L, u[4g + c] holds column 4L + c of rows 4g .. 4g + 3.
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    u[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  // Then gather the four row groups' lanes: v[c] (c < 4) holds columns c and 8 + c of rows
  // 0-7, v[4 + c] columns 4 + c and 12 + c; v[8 + ...] the same for rows 8-15.
  __m512 w[16];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    w[c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    w[4 + c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    w[8 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    w[12 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm512_shuffle_f32x4(w[c], w[8 + c], 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(w[c], w[8 + c], 0xDD);
    r[4 + c] = _mm512_shuffle_f32x4(w[4 + c], w[12 + c], 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(w[4 + c], w[12 + c], 0xDD);
  }
}

// Rows [first, last) (clipped to len) of one head's K and V into L1 and of its Q with hint
// QHint: staging moves K and V now, Q now (bf16) or a block at a time later (float32).
// (The hint's type is GCC's enum _mm_hint, clang's int.)
template <decltype(_MM_HINT_T0) QHint>
void prefetch_head_rows(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                        std::size_t head_dim, std::size_t first, std::size_t last) {
  for (std::size_t j = first; j < last && j < len; ++j) {
    for (std::size_t d = 0; d < head_dim; d += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(k + j * ld + d), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(v + j * ld + d), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(q + j * ld + d), QHint);
    }
  }
}

constexpr std::size_t kStageAhead = 32;  // rows the staging prefetches ahead of the block it moves

// The rows of the 16-row block at j0 that lie in the sequence: len_pad may run a block past
// len (the spare line), with none.
inline std::size_t block_rows(std::size_t j0, std::size_t len) {
  return j0 >= len ? 0 : len - j0 < 16 ? len - j0 : 16;
}

// K transposed into kt ([head_dim][len_pad], zero past len) and V copied into contiguous rows
// vc ([len][head_dim]), 16 keys at a time. The head's rows are ld floats apart in a QKV
// matrix far larger than L2, so each row is a cache miss the hardware prefetchers do not
// see coming (the stride is several KiB): the rows a few blocks ahead, Q's included, are
// prefetched while this block is moved. Unprefetched, this staging took a third of the
// attention's time at 128 tokens.
void stage_keys_values(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                       std::size_t len_pad, std::size_t head_dim, float* kt, float* vc) {
  prefetch_head_rows<_MM_HINT_T1>(q, k, v, ld, len, head_dim, 0, kStageAhead);
  for (std::size_t j0 = 0; j0 < len_pad; j0 += 16) {
    prefetch_head_rows<_MM_HINT_T1>(q, k, v, ld, len, head_dim, j0 + kStageAhead, j0 + kStageAhead + 16);
    const std::size_t rows = block_rows(j0, len);
    for (std::size_t d0 = 0; d0 < head_dim; d0 += 16) {
      const std::size_t cols = head_dim - d0 < 16 ? head_dim - d0 : 16;
      const __mmask16 m = tail_mask(cols);
      __m512 blk[16];
#pragma GCC unroll 16
      for (std::size_t r = 0; r < 16; ++r) {
        if (r < rows) {
          blk[r] = _mm512_maskz_loadu_ps(m, k + (j0 + r) * ld + d0);
          _mm512_mask_storeu_ps(vc + (j0 + r) * head_dim + d0, m,
                                _mm512_maskz_loadu_ps(m, v + (j0 + r) * ld + d0));
        } else {
          blk[r] = _mm512_setzero_ps();
        }
      }
      transpose16(blk);
      for (std::size_t c = 0; c < cols; ++c) _mm512_storeu_ps(kt + (d0 + c) * len_pad + j0, blk[c]);
    }
  }
}

// ---- The bf16 variant: the same blocks with vdpbf16ps (two products per lane and
// instruction) over operands rounded to bfloat16; scores, softmax and sums stay float32.

// Two rows of 16 floats rounded to bf16 and interleaved per lane: lane i holds lo[i] in its
// low half and hi[i] in its high half, the pair vdpbf16ps multiplies with another such pair.
__attribute__((target("avx512bf16"))) inline __m512i bf16_pairs(__m512 lo, __m512 hi) {
  const __m512i l = _mm512_cvtepu16_epi32(__builtin_bit_cast(__m256i, _mm512_cvtneps_pbh(lo)));
  const __m512i h = _mm512_cvtepu16_epi32(__builtin_bit_cast(__m256i, _mm512_cvtneps_pbh(hi)));
  return _mm512_or_si512(l, _mm512_slli_epi32(h, 16));
}

// softmax_row's exponentials written to p in bf16 (zero past len, to the 16 boundary) rather
// than back over the scores: the P·V product reads them so. Returns 1 / their float32 sum.
__attribute__((target("avx512bf16"))) float softmax_row_bf16(const float* s, std::size_t len,
                                                             std::uint16_t* p) {
  const __m512 mx = row_max(s, len);
  __m512 vsum = _mm512_setzero_ps();
  for (std::size_t j = 0; j < len; j += 16) {
    const __m512 e =
        _mm512_maskz_mov_ps(tail_mask(len - j), avx512::exp_ps(_mm512_sub_ps(_mm512_loadu_ps(s + j), mx)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + j),
                        __builtin_bit_cast(__m256i, _mm512_cvtneps_pbh(e)));
    vsum = _mm512_add_ps(vsum, e);
  }
  return 1.0F / avx512::hsum_ps(vsum);
}

// K as bf16 pairs over dimensions, kt2[d/2][j] = (k_j[d], k_j[d+1]) (zero past len), V as
// pairs over keys, vc2[j/2][d] = (v_j[d], v_{j+1}[d]) (zero past len), and Q's rows in bf16,
// qb[j][d] (so as pairs over dimensions too): what the scores and P·V products take. Staged
// as the float32 kernel's K and V, 16 rows at a time, Q with them (read per block of
// queries later, its strided rows had missed cache there).
__attribute__((target("avx512bf16"))) void stage_pairs(const float* q, const float* k, const float* v,
                                                       std::size_t ld, std::size_t len, std::size_t len_pad,
                                                       std::size_t head_dim, std::uint32_t* kt2,
                                                       std::uint32_t* vc2, std::uint16_t* qb) {
  prefetch_head_rows<_MM_HINT_T0>(q, k, v, ld, len, head_dim, 0, kStageAhead);
  for (std::size_t j0 = 0; j0 < len_pad; j0 += 16) {
    prefetch_head_rows<_MM_HINT_T0>(q, k, v, ld, len, head_dim, j0 + kStageAhead, j0 + kStageAhead + 16);
    const std::size_t rows = block_rows(j0, len);
    for (std::size_t d0 = 0; d0 < head_dim; d0 += 16) {
      const std::size_t cols = head_dim - d0 < 16 ? head_dim - d0 : 16;
      const __mmask16 m = tail_mask(cols);
      for (std::size_t r = 0; r < rows; ++r) {
        const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, q + (j0 + r) * ld + d0));
        _mm256_mask_storeu_epi16(qb + (j0 + r) * head_dim + d0, m, __builtin_bit_cast(__m256i, h));
      }
      __m512 blk[16];
      __m512 vrow[16];
#pragma GCC unroll 16
      for (std::size_t r = 0; r < 16; ++r) {
        blk[r] = r < rows ? _mm512_maskz_loadu_ps(m, k + (j0 + r) * ld + d0) : _mm512_setzero_ps();
        vrow[r] = r < rows ? _mm512_maskz_loadu_ps(m, v + (j0 + r) * ld + d0) : _mm512_setzero_ps();
      }
      for (std::size_t r = 0; r < 16; r += 2) {
        _mm512_mask_storeu_epi32(vc2 + ((j0 + r) / 2) * head_dim + d0, m, bf16_pairs(vrow[r], vrow[r + 1]));
      }
      transpose16(blk);
      for (std::size_t c = 0; c < cols; c += 2) {
        _mm512_storeu_si512(kt2 + ((d0 + c) / 2) * len_pad + j0, bf16_pairs(blk[c], blk[c + 1]));
      }
    }
  }
}

// scores[r][j] = scale * q_r · k_j for j < keys (a multiple of 16) from the pairs: qp holds
// each query row's pairs (head_dim / 2 of them), kt2 rows are len_pad apart.
template <int R>
__attribute__((target("avx512bf16"))) void scores_block_bf16(const std::uint32_t* qp,
                                                             const std::uint32_t* kt2, std::size_t len_pad,
                                                             std::size_t keys, std::size_t pairs, float scale,
                                                             float* scores) {
  const __m512 vscale = _mm512_set1_ps(scale);
  std::size_t j0 = 0;
  for (; j0 + 64 <= keys; j0 += 64) {
    __m512 acc[R][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_setzero_ps();
    }
    for (std::size_t d = 0; d < pairs; ++d) {
      const std::uint32_t* row = kt2 + d * len_pad + j0;
      __m512bh kv[4];
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) kv[c] = __builtin_bit_cast(__m512bh, _mm512_loadu_si512(row + 16 * c));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const auto qd = __builtin_bit_cast(
            __m512bh, _mm512_set1_epi32(static_cast<int>(qp[static_cast<std::size_t>(r) * pairs + d])));
        for (int c = 0; c < 4; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], qd, kv[c]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      float* s = scores + static_cast<std::size_t>(r) * len_pad + j0;
      for (int c = 0; c < 4; ++c) _mm512_storeu_ps(s + 16 * c, _mm512_mul_ps(acc[r][c], vscale));
    }
  }
  for (; j0 < keys; j0 += 16) {
    __m512 acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (std::size_t d = 0; d < pairs; ++d) {
      const auto kv = __builtin_bit_cast(__m512bh, _mm512_loadu_si512(kt2 + d * len_pad + j0));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const auto qd = __builtin_bit_cast(
            __m512bh, _mm512_set1_epi32(static_cast<int>(qp[static_cast<std::size_t>(r) * pairs + d])));
        acc[r] = _mm512_dpbf16_ps(acc[r], qd, kv);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      _mm512_storeu_ps(scores + static_cast<std::size_t>(r) * len_pad + j0, _mm512_mul_ps(acc[r], vscale));
    }
  }
}

// out_r[d0 .. d0 + 16*NV) = inv_r * sum_j p_r[j] v_j over key pairs: pp holds each row's
// probabilities as bf16 (pp_ld uint16 apart, zero past the keys), vc2 the value pairs.
template <int R, int NV>
__attribute__((target("avx512bf16"))) void pv_block_bf16(const std::uint16_t* pp, std::size_t pp_ld,
                                                         const std::uint32_t* vc2, std::size_t head_dim,
                                                         std::size_t key_pairs, std::size_t d0,
                                                         __mmask16 last, const float* inv, float* out,
                                                         std::size_t ld_out) {
  __m512 acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (std::size_t jp = 0; jp < key_pairs; ++jp) {
    const std::uint32_t* vj = vc2 + jp * head_dim + d0;
    __m512bh vv[NV];
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) {
      vv[c] = __builtin_bit_cast(
          __m512bh, _mm512_maskz_loadu_epi32(c == NV - 1 ? last : __mmask16(0xFFFF), vj + 16 * c));
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      std::uint32_t pair = 0;
      std::memcpy(&pair, pp + static_cast<std::size_t>(r) * pp_ld + 2 * jp, sizeof(pair));
      const auto p = __builtin_bit_cast(__m512bh, _mm512_set1_epi32(static_cast<int>(pair)));
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], p, vv[c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const __m512 vinv = _mm512_set1_ps(inv[r]);
    float* o = out + static_cast<std::size_t>(r) * ld_out + d0;
    for (int c = 0; c < NV; ++c) {
      _mm512_mask_storeu_ps(o + 16 * c, c == NV - 1 ? last : __mmask16(0xFFFF),
                            _mm512_mul_ps(acc[r][c], vinv));
    }
  }
}

// Query rows i0 .. i0 + R - 1; qp: their bf16 rows (head_dim / 2 pairs each).
template <int R>
__attribute__((target("avx512bf16"))) void attend_rows_bf16(
    const std::uint32_t* kt2, const std::uint32_t* vc2, std::size_t len, std::size_t len_pad,
    std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scores, const std::uint32_t* qp,
    std::uint16_t* pp, const ScoreBias* bias, std::size_t i0) {
  const std::size_t pairs = head_dim / 2;
  const KeyRange keys = block_keys(bias, i0, R, len, 16);
  const std::size_t padded = (keys.count + 15) / 16 * 16;
  scores_block_bf16<R>(qp, kt2 + keys.first, len_pad, padded, pairs, scale, scores);
  if (bias != nullptr) add_score_bias(*bias, i0, R, scores, len_pad, keys.first, keys.count);
  float inv[R];
  for (int r = 0; r < R; ++r) {
    inv[r] = softmax_row_bf16(scores + static_cast<std::size_t>(r) * len_pad, keys.count,
                              pp + static_cast<std::size_t>(r) * len_pad);
  }
  const std::size_t key_pairs = (keys.count + 1) / 2;
  const std::uint32_t* v0 = vc2 + (keys.first / 2) * head_dim;  // keys.first is a multiple of 16
  for_each_dim_chunk(head_dim, [&](auto nv, std::size_t d0, __mmask16 last) {
    pv_block_bf16<R, decltype(nv)::value>(pp, len_pad, v0, head_dim, key_pairs, d0, last, inv, out, ld_out);
  });
}

}  // namespace

__attribute__((target("avx512bf16"))) void attend_head_avx512_bf16(
    const float* q, const float* k, const float* v, std::size_t ld, std::size_t len, std::size_t head_dim,
    float scale, float* out, std::size_t ld_out, float* scratch, const ScoreBias* bias) {
  if (head_dim % 2 != 0) {  // pairs over dimensions need an even head size
    attend_head_avx512(q, k, v, ld, len, head_dim, scale, out, ld_out, scratch, bias);
    return;
  }
  constexpr std::size_t kRows = 4;
  std::size_t len_pad = (len + 15) / 16 * 16;
  if (len_pad % 1024 == 0) len_pad += 16;
  // Within attention_scratch_floats: K pairs (head_dim/2 x len_pad words), the scores
  // (kRows x len_pad floats), P in bf16 (kRows x len_pad halves), V pairs (len_pad/2 x
  // head_dim words), Q in bf16 (len x head_dim halves).
  auto* kt2 = reinterpret_cast<std::uint32_t*>(scratch);
  float* scores = scratch + (head_dim / 2) * len_pad;
  auto* pp = reinterpret_cast<std::uint16_t*>(scores + kRows * len_pad);
  auto* vc2 = reinterpret_cast<std::uint32_t*>(scores + kRows * len_pad + kRows * len_pad / 2);
  auto* qb = reinterpret_cast<std::uint16_t*>(vc2 + (len_pad / 2) * head_dim);
  const unsigned int csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040U);  // as the float32 kernel: far keys' subnormals flushed
  stage_pairs(q, k, v, ld, len, len_pad, head_dim, kt2, vc2, qb);
  // Query row i's pairs: its bf16 row read as words.
  auto q_rows = [&](std::size_t i) { return reinterpret_cast<const std::uint32_t*>(qb + i * head_dim); };
  std::size_t i = 0;
  for (; i + kRows <= len; i += kRows) {
    attend_rows_bf16<4>(kt2, vc2, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores, q_rows(i),
                        pp, bias, i);
  }
  switch (len - i) {
    case 3:
      attend_rows_bf16<3>(kt2, vc2, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                          q_rows(i), pp, bias, i);
      break;
    case 2:
      attend_rows_bf16<2>(kt2, vc2, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                          q_rows(i), pp, bias, i);
      break;
    case 1:
      attend_rows_bf16<1>(kt2, vc2, len, len_pad, head_dim, scale, out + i * ld_out, ld_out, scores,
                          q_rows(i), pp, bias, i);
      break;
    default:
      break;
  }
  _mm_setcsr(csr);
}

void attend_head_avx512(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                        std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                        const ScoreBias* bias) {
  constexpr std::size_t kRows = 4;
  // Rows of K^T and of the scores a multiple of 4 KiB apart (len 1024, 2048, ...) would all
  // map to the same L1 sets, and a load of a score just stored would wait on a false 4K-alias
  // conflict: one spare cache line per row avoids both.
  std::size_t len_pad = (len + 15) / 16 * 16;
  if (len_pad % 1024 == 0) len_pad += 16;
  float* kt = scratch;                           // [head_dim][len_pad]
  float* scores = scratch + head_dim * len_pad;  // [kRows][len_pad]
  float* vc = scores + kRows * len_pad;          // [len][head_dim]: V's rows, contiguous
  // Far keys get probabilities that underflow to subnormals (ALiBi's linear penalty puts a band
  // of them in every long row), and each subnormal exp result or product takes a microcode
  // assist of ~100 cycles: 4x the whole kernel's time at 8192 tokens. Flushing them to zero
  // (FTZ, DAZ) changes no result: a term below 2^-126 is absorbed by sums of order 1.
  const unsigned int csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040U);
  stage_keys_values(q, k, v, ld, len, len_pad, head_dim, kt, vc);
  v = vc;
  std::size_t i = 0;
  for (; i + kRows <= len; i += kRows) {
    // The next block's query rows into L1 while this block runs (staging left them in L2):
    // the scores read them a float at a time, and each row is a miss otherwise.
    for (std::size_t r = i + kRows; r < i + 2 * kRows && r < len; ++r) {
      for (std::size_t d = 0; d < head_dim; d += 16) {
        _mm_prefetch(reinterpret_cast<const char*>(q + r * ld + d), _MM_HINT_T0);
      }
    }
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

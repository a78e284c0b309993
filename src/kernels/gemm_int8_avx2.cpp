// AVX2 int8 micro-kernel (the fallback for CPUs without AVX-512 VNNI), with the AVX2
// row quantiser and epilogue.
//
// The sums must be exact, so the kernel does not use vpmaddubsw (u8 x s8 pairs saturate
// to int16). It sign-extends 16 panel bytes (4 columns x 4 k-steps) to int16 and multiplies
// them with vpmaddwd against the row's 4 k-steps of A, also widened to int16 and repeated
// over the register: every int32 lane then holds a·w for 2 k-steps of one column (lanes
// 2c and 2c + 1 hold k-steps 0-1 and 2-3 of column c). Pairs of lanes are added once at
// the end (vphaddd), so the packed layout [kp/4][32][4] needs no second copy.
//
// Register blocking: 6 rows x 8 columns (2 widened panel vectors) = 12 accumulators; the
// 32 columns of a panel are 4 passes over k. A is widened once per chunk of k into a stack
// buffer, so the loop's multiplies read it straight from L1 (vpmaddwd ymm, ymm, m256)
// instead of widening it again in every pass: per 4 k-steps and pass, 24 multiply/add uops
// for 192 products and 2 panel widenings, 14 registers live. Measured on Zen 4 (tile alone,
// one core, panels in L1/L2): 94 G int8 MAC/s, against 78 for the same blocking widening A
// inside the loop and 70-79 for 3x8, 2x16 and 3x16 blockings.

#include <immintrin.h>

#include <cstring>

#include <math.h>

#include "kernels/gemm_int8.hpp"
#include "kernels/simd_math_avx2.hpp"

namespace warden::kernels::detail {

namespace {

constexpr int kMr = static_cast<int>(kInt8MR);
constexpr std::size_t kPassCols = 8;  // columns per pass: 2 vectors of 4 columns
constexpr std::size_t kChunk = 256;   // k-steps of A widened at a time (12 KB on the stack)

// Lane mask for the first `cols` of 8 lanes (negative: none).
inline __m256i lane_mask(int cols) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), idx);
}

// Round to nearest even (the default MXCSR mode, as the portable quantiser) of
// clamp(x · inv, -127, 127) for 32 floats, stored as 32 int8 in order.
inline void quantize32(const float* x, __m256 vinv, std::int8_t* dst) {
  const __m256 lo = _mm256_set1_ps(-127.0F);
  const __m256 hi = _mm256_set1_ps(127.0F);
  __m256i q[4];
  for (int v = 0; v < 4; ++v) {
    const __m256 s = _mm256_mul_ps(_mm256_loadu_ps(x + 8 * v), vinv);
    q[v] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(s, lo), hi));
  }
  // The packs work within 128-bit lanes: the 4-byte groups come out as
  // q0[0:4] q1[0:4] q2[0:4] q3[0:4] q0[4:8] q1[4:8] q2[4:8] q3[4:8]; the permute restores order.
  const __m256i q16a = _mm256_packs_epi32(q[0], q[1]);
  const __m256i q16b = _mm256_packs_epi32(q[2], q[3]);
  const __m256i q8 = _mm256_packs_epi16(q16a, q16b);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permutevar8x32_epi32(q8, order));
}

}  // namespace

void int8_tile_avx2(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                    std::size_t kp, const std::int32_t* /*sums*/, std::int32_t* out) {
  static_assert(kInt8PanelWidth == 32 && kInt8MR == 6, "4 passes of 8 columns, 6 rows");
  constexpr std::size_t kPasses = kInt8PanelWidth / kPassCols;
  // A, widened: per 4 k-steps and row, a0 a1 a2 a3 repeated 4 times as int16, so that the
  // pairs (a0, a1), (a2, a3) meet each column's k-steps 0-1 and 2-3.
  alignas(32) std::int16_t wide[kChunk / 4][kMr][16];
  // The accumulators of every pass, kept between chunks: [pass][row][vector][8 lanes].
  alignas(32) std::int32_t partial[kPasses][kMr][2][8];
  const std::int8_t* row_ptr[kMr];
  for (int r = 0; r < kMr; ++r) {
    // Rows past `rows` re-read the last real row (always valid memory); they are not stored.
    const auto row = static_cast<std::size_t>(r);
    row_ptr[r] = a + (row < rows ? row : rows - 1) * lda;
  }
  for (std::size_t k0 = 0; k0 < kp; k0 += kChunk) {
    const std::size_t kc = kp - k0 < kChunk ? kp - k0 : kChunk;
    for (std::size_t k4 = 0; k4 < kc; k4 += 4) {
#pragma GCC unroll 6
      for (int r = 0; r < kMr; ++r) {
        std::int32_t quad = 0;
        std::memcpy(&quad, row_ptr[r] + k0 + k4, sizeof(quad));
        _mm256_store_si256(reinterpret_cast<__m256i*>(wide[k4 / 4][r]),
                           _mm256_cvtepi8_epi16(_mm_set1_epi32(quad)));
      }
    }
    for (std::size_t pass = 0; pass < kPasses; ++pass) {
      __m256i acc0[kMr];
      __m256i acc1[kMr];
#pragma GCC unroll 6
      for (int r = 0; r < kMr; ++r) {
        acc0[r] = k0 == 0 ? _mm256_setzero_si256()
                          : _mm256_load_si256(reinterpret_cast<const __m256i*>(partial[pass][r][0]));
        acc1[r] = k0 == 0 ? _mm256_setzero_si256()
                          : _mm256_load_si256(reinterpret_cast<const __m256i*>(partial[pass][r][1]));
      }
      const std::int8_t* b = panel + k0 * kInt8PanelWidth + pass * kPassCols * 4;
      for (std::size_t k4 = 0; k4 < kc; k4 += 4, b += kInt8PanelWidth * 4) {
        const __m256i b0 = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(b)));
        const __m256i b1 = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(b + 16)));
#pragma GCC unroll 6
        for (int r = 0; r < kMr; ++r) {
          const __m256i av = _mm256_load_si256(reinterpret_cast<const __m256i*>(wide[k4 / 4][r]));
          acc0[r] = _mm256_add_epi32(acc0[r], _mm256_madd_epi16(b0, av));
          acc1[r] = _mm256_add_epi32(acc1[r], _mm256_madd_epi16(b1, av));
        }
      }
#pragma GCC unroll 6
      for (int r = 0; r < kMr; ++r) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(partial[pass][r][0]), acc0[r]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(partial[pass][r][1]), acc1[r]);
      }
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t pass = 0; pass < kPasses; ++pass) {
      // hadd gives columns 0 1 4 5 | 2 3 6 7 of the pass; the permute puts them in order.
      const __m256i s =
          _mm256_hadd_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(partial[pass][r][0])),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(partial[pass][r][1])));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * kInt8PanelWidth + pass * kPassCols),
                          _mm256_permute4x64_epi64(s, 0xD8));
    }
  }
}

float int8_quantize_row_avx2(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst) {
  const __m256 sign = _mm256_set1_ps(-0.0F);
  __m256 vmax = _mm256_setzero_ps();
  __m256 nan = _mm256_setzero_ps();
  auto scan = [&](__m256 x) {
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    vmax = _mm256_max_ps(vmax, _mm256_andnot_ps(sign, x));
  };
  std::size_t i = 0;
  for (; i + 8 <= k; i += 8) scan(_mm256_loadu_ps(src + i));
  if (i < k) scan(_mm256_maskload_ps(src + i, lane_mask(static_cast<int>(k - i))));  // zero past k
  const __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  const __m128 m2 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  const float max_abs = _mm_cvtss_f32(_mm_max_ss(m2, _mm_shuffle_ps(m2, m2, 1)));
  if (_mm256_movemask_ps(nan) != 0 || !(max_abs > 0.0F) || max_abs == __builtin_inff()) {
    // As the portable quantiser: an all-zero or non-finite row is all zero, scale 0.
    std::memset(dst, 0, kp);
    return 0.0F;
  }
  const __m256 vinv = _mm256_set1_ps(__builtin_fminf(127.0F / max_abs, __FLT_MAX__));  // as the portable one
  i = 0;
  for (; i + 32 <= k; i += 32) quantize32(src + i, vinv, dst + i);
  if (i < kp) {
    // The tail through a zero-padded copy: zeros quantise to the padding's zeros.
    alignas(32) float x[32] = {};
    alignas(32) std::int8_t q[32];
    std::memcpy(x, src + i, (k - i) * sizeof(float));
    quantize32(x, vinv, q);
    std::memcpy(dst + i, q, kp - i);
  }
  return max_abs / 127.0F;
}

void int8_epilogue_avx2(const std::int32_t* acc, std::size_t rows, std::size_t cols, const float* row_scales,
                        const float* col_scales, const float* bias, Activation act, const float* residual,
                        std::size_t ldr, float* c, std::size_t ldc) {
  const int n = static_cast<int>(cols);
  __m256i mask[4];
  __m256 cs[4];
  __m256 b[4];
  for (int v = 0; v < 4; ++v) {
    mask[v] = lane_mask(n - 8 * v);
    cs[v] = _mm256_maskload_ps(col_scales + 8 * v, mask[v]);
    b[v] = _mm256_maskload_ps(bias + 8 * v, mask[v]);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const __m256 rs = _mm256_set1_ps(row_scales[r]);
    float* out = c + r * ldc;
    const float* res = residual != nullptr ? residual + r * ldr : nullptr;
    __m256 v[4];
    for (int q = 0; q < 4; ++q) {
      const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + r * 32 + 8 * q));
      v[q] = avx2::activate_ps(_mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(rs, cs[q]), b[q]), act);
    }
    for (int q = 0; q < 4; ++q) {
      if (res != nullptr) v[q] = _mm256_add_ps(v[q], _mm256_maskload_ps(res + 8 * q, mask[q]));
      _mm256_maskstore_ps(out + 8 * q, mask[q], v[q]);
    }
  }
}

}  // namespace warden::kernels::detail

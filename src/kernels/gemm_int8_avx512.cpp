// AVX-512 VNNI int8 micro-kernel: an 8 x 32 tile of int32 sums in 16 zmm accumulators. Per
// 4 k-steps it loads two 64-byte lines of the packed panel (16 columns x 4 k each) and
// broadcasts 4 bytes of each A row. vpdpbusd multiplies unsigned by signed bytes, so A comes
// offset by 128 (q ^ 0x80 == q + 128 as u8: linear_int8 flips the rows once, when it
// quantises them) and 128 · Σ_k w_q[j,k] is subtracted at the end: the sums are then exactly
// those of the portable kernel.

#include <immintrin.h>

#include <cstring>

#include <math.h>

#include "kernels/gemm_int8.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

__attribute__((target("avx512vnni"))) void int8_tile_avx512_vnni(const std::int8_t* a, std::size_t lda,
                                                                 std::size_t rows, const std::int8_t* panel,
                                                                 std::size_t kp, const std::int32_t* sums,
                                                                 std::int32_t* out) {
  constexpr int MR = static_cast<int>(kInt8VnniMR);
  static_assert(kInt8PanelWidth == 32, "two zmm of 16 int32 columns");
  static_assert(kInt8VnniMR == 8, "eight named rows below");
  const std::int8_t* row_ptr[MR];
  for (int r = 0; r < MR; ++r) {
    // Rows past `rows` re-read the last real row (always valid memory); they are not stored.
    // (No std::min: an inline template instantiated here could be linked into other callers.)
    const auto row = static_cast<std::size_t>(r);
    row_ptr[r] = a + (row < rows ? row : rows - 1) * lda;
  }
  // Sixteen named accumulators, each updated by asm with a tied operand. Through the
  // intrinsic (and in an array), GCC 12 copied them all to other registers and back on
  // every step or kept them on the stack: two extra moves per product. Eight rows (not the
  // AVX2 tile's six) use 19 of the 32 registers, load each panel line once per 16 products,
  // and cut a short query's 16 rows into two whole tiles.
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  const std::int8_t *a0 = row_ptr[0], *a1 = row_ptr[1], *a2 = row_ptr[2], *a3 = row_ptr[3], *a4 = row_ptr[4],
                    *a5 = row_ptr[5], *a6 = row_ptr[6], *a7 = row_ptr[7];
  for (std::size_t k4 = 0; k4 < kp; k4 += 4) {
    const __m512i b0 = _mm512_load_si512(panel + k4 * 32);
    const __m512i b1 = _mm512_load_si512(panel + k4 * 32 + 64);
    // One row: its 4 bytes broadcast (unsigned, offset) times both 16-column halves.
#define WARDEN_VNNI_ROW(ar, lo, hi)                           \
  {                                                           \
    std::int32_t quad = 0;                                    \
    std::memcpy(&quad, (ar) + k4, sizeof(quad));              \
    const __m512i av = _mm512_set1_epi32(quad);               \
    asm("vpdpbusd %2, %1, %0" : "+v"(lo) : "v"(av), "v"(b0)); \
    asm("vpdpbusd %2, %1, %0" : "+v"(hi) : "v"(av), "v"(b1)); \
  }
    WARDEN_VNNI_ROW(a0, c00, c01)
    WARDEN_VNNI_ROW(a1, c10, c11)
    WARDEN_VNNI_ROW(a2, c20, c21)
    WARDEN_VNNI_ROW(a3, c30, c31)
    WARDEN_VNNI_ROW(a4, c40, c41)
    WARDEN_VNNI_ROW(a5, c50, c51)
    WARDEN_VNNI_ROW(a6, c60, c61)
    WARDEN_VNNI_ROW(a7, c70, c71)
#undef WARDEN_VNNI_ROW
  }
  const __m512i corr0 = _mm512_slli_epi32(_mm512_loadu_si512(sums), 7);
  const __m512i corr1 = _mm512_slli_epi32(_mm512_loadu_si512(sums + 16), 7);
  const __m512i lo[MR] = {c00, c10, c20, c30, c40, c50, c60, c70};
  const __m512i hi[MR] = {c01, c11, c21, c31, c41, c51, c61, c71};
  for (int r = 0; r < MR; ++r) {
    if (static_cast<std::size_t>(r) >= rows) break;
    _mm512_storeu_si512(out + r * 32, _mm512_sub_epi32(lo[r], corr0));
    _mm512_storeu_si512(out + r * 32 + 16, _mm512_sub_epi32(hi[r], corr1));
  }
}

float int8_quantize_row_avx512(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst) {
  const __m512 sign = _mm512_set1_ps(-0.0F);
  __m512 vmax = _mm512_setzero_ps();
  __mmask16 nan = 0;
  for (std::size_t i = 0; i < k; i += 16) {
    const std::size_t left = k - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
    const __m512 x = _mm512_maskz_loadu_ps(m, src + i);
    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    vmax = _mm512_max_ps(vmax, _mm512_andnot_ps(sign, x));
  }
  const float max_abs = avx512::hmax_ps(vmax);
  if (nan != 0 || !(max_abs > 0.0F) || max_abs == __builtin_inff()) {
    for (std::size_t i = 0; i < kp; ++i) dst[i] = 0;
    return 0.0F;
  }
  const float inv = __builtin_fminf(127.0F / max_abs, __FLT_MAX__);  // capped as the portable one
  const __m512 vinv = _mm512_set1_ps(inv);
  const __m512 lo = _mm512_set1_ps(-127.0F);
  const __m512 hi = _mm512_set1_ps(127.0F);
  // 64 at a time: four conversions narrowed with two saturating packs (exact: the values are
  // integers in [-127, 127]) and one store, instead of four narrowing stores, which cost more
  // than the arithmetic. The packs interleave 128-bit lanes; one permute puts them back.
  const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  std::size_t i = 0;
  for (; i + 64 <= k; i += 64) {
    __m512i q[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512 x = _mm512_loadu_ps(src + i + static_cast<std::size_t>(j) * 16);
      q[j] = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x, vinv), lo), hi));
    }
    const __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(q[0], q[1]), _mm512_packs_epi32(q[2], q[3]));
    _mm512_storeu_si512(dst + i, _mm512_permutexvar_epi32(order, bytes));
  }
  for (; i < kp; i += 16) {
    const std::size_t left = kp - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
    const std::size_t real = i < k ? k - i : 0;
    const __mmask16 mk = real >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << real) - 1U);
    const __m512 x = _mm512_maskz_loadu_ps(mk, src + i);  // zero past k: the padding
    const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x, vinv), lo), hi);
    // Default MXCSR rounding: to nearest even, as the portable quantiser.
    _mm512_mask_cvtepi32_storeu_epi8(dst + i, m, _mm512_cvtps_epi32(v));
  }
  return max_abs / 127.0F;
}

void int8_epilogue_avx512(const std::int32_t* acc, std::size_t rows, std::size_t cols,
                          const float* row_scales, const float* col_scales, const float* bias, Activation act,
                          const float* residual, std::size_t ldr, float* c, std::size_t ldc) {
  const auto n = static_cast<unsigned>(cols);
  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << n) - 1U);
  const __mmask16 m1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1U << (n - 16)) - 1U) : __mmask16(0);
  const __m512 cs0 = _mm512_maskz_loadu_ps(m0, col_scales);
  const __m512 cs1 = _mm512_maskz_loadu_ps(m1, col_scales + 16);
  const __m512 b0 = _mm512_maskz_loadu_ps(m0, bias);
  const __m512 b1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  for (std::size_t r = 0; r < rows; ++r) {
    const __m512 rs = _mm512_set1_ps(row_scales[r]);
    __m512 v0 =
        _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(acc + r * 32)), _mm512_mul_ps(rs, cs0), b0);
    __m512 v1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(acc + r * 32 + 16)),
                                _mm512_mul_ps(rs, cs1), b1);
    v0 = avx512::activate_ps(v0, act);
    v1 = avx512::activate_ps(v1, act);
    float* out = c + r * ldc;
    const float* res = residual != nullptr ? residual + r * ldr : nullptr;
    if (res != nullptr) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, res));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, res + 16));
    }
    _mm512_mask_storeu_ps(out, m0, v0);
    _mm512_mask_storeu_ps(out + 16, m1, v1);
  }
}

}  // namespace warden::kernels::detail

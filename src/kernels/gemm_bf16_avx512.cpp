// AVX-512 bf16 micro-kernels: a kBf16MR x 32 tile of fp32 sums in 2 · kBf16MR zmm
// accumulators. Per 2 k-steps each loads two 64-byte lines of the packed panel (16 columns x
// 2 k each) and broadcasts one 32-bit pair of bf16 per A row.
//
// - bf16_tile_avx512_bf16 (AVX-512 BF16): vdpbf16ps multiplies the pairs and adds both
//   products to the fp32 accumulator: twice the multiply-adds of an fp32 FMA per instruction.
//   (It treats denormal inputs as zero and flushes denormal results, which moves a sum by
//   less than 1e-38.)
// - bf16_tile_avx512 (AVX-512F only): a bf16 is the top half of an fp32, so the even k-step
//   of a lane is lane << 16 and the odd one lane & 0xFFFF0000; two FMAs per pair. No faster
//   than fp32 in arithmetic, but it streams half the weight bytes.

#include <immintrin.h>

#include <cstring>

#include <math.h>

#include "kernels/gemm_bf16.hpp"
#include "kernels/simd_math_avx512.hpp"

namespace warden::kernels::detail {

namespace {

constexpr int MR = static_cast<int>(kBf16MR);
static_assert(kBf16PanelWidth == 32, "two zmm of 16 fp32 columns");

// Rows past `rows` re-read the last real row (always valid memory); they are not stored.
// (No std::min: an inline template instantiated here could be linked into other callers.)
inline void row_pointers(const std::uint16_t* a, std::size_t lda, std::size_t rows,
                         const std::uint16_t* (&ptr)[MR]) {
  for (int r = 0; r < MR; ++r) {
    const auto row = static_cast<std::size_t>(r);
    ptr[r] = a + (row < rows ? row : rows - 1) * lda;
  }
}

inline std::uint32_t pair_at(const std::uint16_t* p) {
  std::uint32_t pair = 0;
  std::memcpy(&pair, p, sizeof(pair));
  return pair;
}

inline void store_rows(const __m512 (&acc0)[MR], const __m512 (&acc1)[MR], std::size_t rows, float* out) {
  for (int r = 0; r < MR; ++r) {
    if (static_cast<std::size_t>(r) >= rows) break;
    _mm512_storeu_ps(out + r * 32, acc0[r]);
    _mm512_storeu_ps(out + r * 32 + 16, acc1[r]);
  }
}

}  // namespace

__attribute__((target("avx512bf16"))) void bf16_tile_avx512_bf16(const std::uint16_t* a, std::size_t lda,
                                                                 std::size_t rows, const std::uint16_t* panel,
                                                                 std::size_t kp, float* out) {
  const std::uint16_t* row_ptr[MR];
  row_pointers(a, lda, rows, row_ptr);
  __m512 acc0[MR];
  __m512 acc1[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  for (std::size_t k2 = 0; k2 < kp; k2 += 2) {
    const __m512bh b0 = __builtin_bit_cast(__m512bh, _mm512_load_si512(panel + k2 * 32));
    const __m512bh b1 = __builtin_bit_cast(__m512bh, _mm512_load_si512(panel + k2 * 32 + 32));
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const auto pair = static_cast<int>(pair_at(row_ptr[r] + k2));
      const __m512bh av = __builtin_bit_cast(__m512bh, _mm512_set1_epi32(pair));
      acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
      acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
    }
  }
  store_rows(acc0, acc1, rows, out);
}

void bf16_tile_avx512(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                      std::size_t kp, float* out) {
  const std::uint16_t* row_ptr[MR];
  row_pointers(a, lda, rows, row_ptr);
  __m512 acc0[MR];
  __m512 acc1[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xFFFF0000U));
  for (std::size_t k2 = 0; k2 < kp; k2 += 2) {
    const __m512i l0 = _mm512_load_si512(panel + k2 * 32);
    const __m512i l1 = _mm512_load_si512(panel + k2 * 32 + 32);
    const __m512 b0e = _mm512_castsi512_ps(_mm512_slli_epi32(l0, 16));
    const __m512 b0o = _mm512_castsi512_ps(_mm512_and_si512(l0, high));
    const __m512 b1e = _mm512_castsi512_ps(_mm512_slli_epi32(l1, 16));
    const __m512 b1o = _mm512_castsi512_ps(_mm512_and_si512(l1, high));
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const std::uint32_t pair = pair_at(row_ptr[r] + k2);
      const __m512 ae = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(pair << 16)));
      const __m512 ao = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(pair & 0xFFFF0000U)));
      acc0[r] = _mm512_fmadd_ps(ao, b0o, _mm512_fmadd_ps(ae, b0e, acc0[r]));
      acc1[r] = _mm512_fmadd_ps(ao, b1o, _mm512_fmadd_ps(ae, b1e, acc1[r]));
    }
  }
  store_rows(acc0, acc1, rows, out);
}

void bf16_round_row_avx512(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst) {
  // The integer form of to_bf16 (not vcvtneps2bf16, which flushes denormals and needs
  // AVX-512 BF16): every path rounds A to the same bits.
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i half = _mm512_set1_epi32(0x7FFF);
  const __m512i quiet = _mm512_set1_epi32(0x0040);
  for (std::size_t i = 0; i < kp; i += 16) {
    const std::size_t left = kp - i;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << left) - 1U);
    const std::size_t real = i < k ? k - i : 0;
    const __mmask16 mk = real >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << real) - 1U);
    const __m512 x = _mm512_maskz_loadu_ps(mk, src + i);  // zero past k: the padding
    const __m512i bits = _mm512_castps_si512(x);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    const __m512i top = _mm512_srli_epi32(bits, 16);
    const __m512i rounded =
        _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(half, _mm512_and_si512(top, one))), 16);
    const __m512i h = _mm512_mask_or_epi32(rounded, nan, top, quiet);
    _mm512_mask_cvtepi32_storeu_epi16(dst + i, m, h);
  }
}

void bf16_epilogue_avx512(const float* acc, std::size_t rows, std::size_t cols, const float* bias,
                          Activation act, const float* residual, std::size_t ldr, float* c, std::size_t ldc) {
  const auto n = static_cast<unsigned>(cols);
  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1U << n) - 1U);
  const __mmask16 m1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1U << (n - 16)) - 1U) : __mmask16(0);
  const __m512 b0 = _mm512_maskz_loadu_ps(m0, bias);
  const __m512 b1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  for (std::size_t r = 0; r < rows; ++r) {
    __m512 v0 = _mm512_add_ps(_mm512_load_ps(acc + r * 32), b0);
    __m512 v1 = _mm512_add_ps(_mm512_load_ps(acc + r * 32 + 16), b1);
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

// AVX2 bf16 kernel, for CPUs without AVX-512: the packed panel is widened to fp32 with
// shifts (a bf16 is the top half of an fp32: the even k-step of a 32-bit lane is lane << 16,
// the odd one lane & 0xFFFF0000) and multiplied with FMA. Its arithmetic is that of fp32;
// it still streams half the weight bytes, and without it the layer would fall back to the
// scalar loop, several times slower than fp32 linear().

#include <immintrin.h>

#include <cstring>

#include <math.h>

#include "kernels/gemm_bf16.hpp"
#include "kernels/simd_math_avx2.hpp"

namespace warden::kernels::detail {

namespace {

// 4 rows x 16 columns in 8 ymm accumulators; per k-pair two 32-byte panel lines widen to
// four vectors: 14 of the 16 ymm registers.
constexpr int kRows = 4;
constexpr std::size_t kCols = 16;
static_assert(kBf16MR % kRows == 0 && kBf16PanelWidth == 2 * kCols, "tile = 3 x 2 sub-tiles");

inline __m256i lane_mask(int cols) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), idx);
}

// out[r][0..16) for r < rows <= kRows (row stride 32 floats): columns [half*16, half*16+16).
inline void sub_tile(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                     std::size_t kp, float* out) {
  const std::uint16_t* row_ptr[kRows];
  for (int r = 0; r < kRows; ++r) {
    // Rows past `rows` re-read the last real row; they are not stored.
    const auto row = static_cast<std::size_t>(r);
    row_ptr[r] = a + (row < rows ? row : rows - 1) * lda;
  }
  __m256 acc0[kRows];
  __m256 acc1[kRows];
  for (int r = 0; r < kRows; ++r) {
    acc0[r] = _mm256_setzero_ps();
    acc1[r] = _mm256_setzero_ps();
  }
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xFFFF0000U));
  for (std::size_t k2 = 0; k2 < kp; k2 += 2) {
    // One k-pair of the panel is 64 bf16 (32 columns x 2); this half is 32 of them.
    const std::uint16_t* line = panel + k2 * 32;
    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line));
    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 16));
    const __m256 b0e = _mm256_castsi256_ps(_mm256_slli_epi32(l0, 16));
    const __m256 b0o = _mm256_castsi256_ps(_mm256_and_si256(l0, high));
    const __m256 b1e = _mm256_castsi256_ps(_mm256_slli_epi32(l1, 16));
    const __m256 b1o = _mm256_castsi256_ps(_mm256_and_si256(l1, high));
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      std::uint32_t pair = 0;
      std::memcpy(&pair, row_ptr[r] + k2, sizeof(pair));
      const __m256 ae = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(pair << 16)));
      const __m256 ao = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(pair & 0xFFFF0000U)));
      acc0[r] = _mm256_fmadd_ps(ao, b0o, _mm256_fmadd_ps(ae, b0e, acc0[r]));
      acc1[r] = _mm256_fmadd_ps(ao, b1o, _mm256_fmadd_ps(ae, b1e, acc1[r]));
    }
  }
  for (int r = 0; r < kRows; ++r) {
    if (static_cast<std::size_t>(r) >= rows) break;
    _mm256_storeu_ps(out + r * 32, acc0[r]);
    _mm256_storeu_ps(out + r * 32 + 8, acc1[r]);
  }
}

}  // namespace

void bf16_tile_avx2(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                    std::size_t kp, float* out) {
  for (std::size_t r0 = 0; r0 < rows; r0 += kRows) {
    const std::size_t left = rows - r0;
    const std::size_t sub_rows = left < kRows ? left : kRows;
    for (std::size_t half = 0; half < 2; ++half) {
      sub_tile(a + r0 * lda, lda, sub_rows, panel + half * kCols * 2, kp, out + r0 * 32 + half * kCols);
    }
  }
}

void bf16_round_row_avx2(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst) {
  // The integer form of to_bf16, 8 lanes at a time; the tail goes through a small buffer.
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i half = _mm256_set1_epi32(0x7FFF);
  const __m256i quiet = _mm256_set1_epi32(0x0040);
  const __m256i low16 = _mm256_set1_epi32(0xFFFF);
  for (std::size_t i = 0; i < kp; i += 8) {
    const std::size_t real = i < k ? k - i : 0;
    __m256 x;
    if (real >= 8) {
      x = _mm256_loadu_ps(src + i);
    } else {
      x = _mm256_maskload_ps(src + i, lane_mask(static_cast<int>(real)));  // zero past k: the padding
    }
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    const __m256i top = _mm256_srli_epi32(bits, 16);
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(half, _mm256_and_si256(top, one))), 16);
    const __m256i h = _mm256_and_si256(_mm256_blendv_epi8(rounded, _mm256_or_si256(top, quiet), nan), low16);
    // Pack 8 x 32-bit to 8 x 16-bit (packus works per 128-bit lane, hence the permute).
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(h, h), 0x08);
    const __m128i out = _mm256_castsi256_si128(packed);
    const std::size_t left = kp - i;
    if (left >= 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), out);
    } else {
      alignas(16) std::uint16_t tmp[8];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), out);
      std::memcpy(dst + i, tmp, left * sizeof(std::uint16_t));
    }
  }
}

void bf16_epilogue_avx2(const float* acc, std::size_t rows, std::size_t cols, const float* bias,
                        Activation act, const float* residual, std::size_t ldr, float* c, std::size_t ldc) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* out = c + r * ldc;
    const float* res = residual != nullptr ? residual + r * ldr : nullptr;
    for (std::size_t j = 0; j < cols; j += 8) {
      const int left = static_cast<int>(cols - j);
      const __m256i m = lane_mask(left);
      __m256 v = avx2::activate_ps(
          _mm256_add_ps(_mm256_load_ps(acc + r * 32 + j), _mm256_maskload_ps(bias + j, m)), act);
      if (res != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(res + j, m));
      _mm256_maskstore_ps(out + j, m, v);
    }
  }
}

}  // namespace warden::kernels::detail

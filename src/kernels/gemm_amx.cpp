// AMX tiles for the int8 and bf16 dense layers: 32 rows x 32 columns of sums in four 16 x 16
// accumulator tiles; per step two A tiles (16 rows x 64 bytes each) and two B tiles (16 rows
// of 64 bytes: 16 columns x 4 int8 or 2 bf16 k-steps). The packed panel layouts, [k/4][32][4]
// int8 and [k/2][32][2] bf16, are already what tdpbssd and tdpbf16ps read as B: a B tile is
// 16 consecutive k-groups of the panel at a stride of 128 bytes, columns 0-15 at offset 0 and
// 16-31 at offset 64.
//
// int8: both operands are signed (tdpbssd), so unlike the VNNI tile no offset correction is
// needed; the sums are exact, hence equal to every other int8 tile's. bf16: products are
// exact in fp32 and summed in fp32, in the hardware's order (a different rounding of the sums
// than vdpbf16ps, within the same bound).

#include <immintrin.h>

#include <cstring>

#include "kernels/gemm_bf16.hpp"
#include "kernels/gemm_int8.hpp"

namespace warden::kernels::detail {

namespace {

// The 64-byte tile configuration (palette 1): every tile 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

// The configuration is per thread; it is loaded on a thread's first tile and kept (it is the
// same for every layer), so that no tile pays for ldtilecfg.
thread_local bool t_configured = false;

void configure() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  t_configured = true;
}

}  // namespace

void int8_tile_amx(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                   std::size_t kp, std::int32_t* out) {
  if (!t_configured) configure();
  constexpr std::size_t kPanelStride = kInt8PanelWidth * 4;  // bytes per k-quad row of a panel
  const auto a_stride = static_cast<long>(lda);
  const auto b_stride = static_cast<long>(kPanelStride);
  _tile_zero(0);
  _tile_zero(1);
  if (rows > 16) {
    _tile_zero(2);
    _tile_zero(3);
    for (std::size_t k = 0; k < kp; k += 64) {
      const std::int8_t* b = panel + (k / 4) * kPanelStride;
      _tile_loadd(4, a + k, a_stride);
      _tile_loadd(5, a + 16 * lda + k, a_stride);
      _tile_loadd(6, b, b_stride);
      _tile_loadd(7, b + 64, b_stride);
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
    _tile_stored(2, out + 16 * kInt8PanelWidth, static_cast<long>(kInt8PanelWidth * sizeof(std::int32_t)));
    _tile_stored(3, out + 16 * kInt8PanelWidth + 16,
                 static_cast<long>(kInt8PanelWidth * sizeof(std::int32_t)));
  } else {
    for (std::size_t k = 0; k < kp; k += 64) {
      const std::int8_t* b = panel + (k / 4) * kPanelStride;
      _tile_loadd(4, a + k, a_stride);
      _tile_loadd(6, b, b_stride);
      _tile_loadd(7, b + 64, b_stride);
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
    }
  }
  _tile_stored(0, out, static_cast<long>(kInt8PanelWidth * sizeof(std::int32_t)));
  _tile_stored(1, out + 16, static_cast<long>(kInt8PanelWidth * sizeof(std::int32_t)));
}

void bf16_tile_amx(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                   std::size_t kp, float* out) {
  if (!t_configured) configure();
  constexpr std::size_t kPanelStride = kBf16PanelWidth * 2;  // halves per k-pair row of a panel
  const auto a_stride = static_cast<long>(lda * sizeof(std::uint16_t));
  const auto b_stride = static_cast<long>(kPanelStride * sizeof(std::uint16_t));
  constexpr long kOutStride = kBf16PanelWidth * sizeof(float);
  _tile_zero(0);
  _tile_zero(1);
  if (rows > 16) {
    _tile_zero(2);
    _tile_zero(3);
    for (std::size_t k = 0; k < kp; k += 32) {
      const std::uint16_t* b = panel + (k / 2) * kPanelStride;
      _tile_loadd(4, a + k, a_stride);
      _tile_loadd(5, a + 16 * lda + k, a_stride);
      _tile_loadd(6, b, b_stride);
      _tile_loadd(7, b + 32, b_stride);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(2, out + 16 * kBf16PanelWidth, kOutStride);
    _tile_stored(3, out + 16 * kBf16PanelWidth + 16, kOutStride);
  } else {
    for (std::size_t k = 0; k < kp; k += 32) {
      const std::uint16_t* b = panel + (k / 2) * kPanelStride;
      _tile_loadd(4, a + k, a_stride);
      _tile_loadd(6, b, b_stride);
      _tile_loadd(7, b + 32, b_stride);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
    }
  }
  _tile_stored(0, out, kOutStride);
  _tile_stored(1, out + 16, kOutStride);
}

}  // namespace warden::kernels::detail

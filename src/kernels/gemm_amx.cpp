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

#include "kernels/amx.hpp"
#include "kernels/gemm_bf16.hpp"
#include "kernels/gemm_int8.hpp"

namespace warden::kernels::detail {

namespace {

// The 64-byte tile configuration (palette 1).
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

constexpr std::size_t kPanelBytes = 128;  // one k-group row of a 32-column panel, both types
constexpr long kOutStride = 32 * 4;       // bytes per row of the 32-column int32 / fp32 output

// The 32 x 32 tile over kp k-steps, Int8 choosing tdpbssd (64 int8 k-steps per B tile) or
// tdpbf16ps (32 bf16 k-steps). Tile numbers must be constants, hence one body per type.
template <bool Int8, typename In, typename Out>
void tile_32x32(const In* a, std::size_t lda, std::size_t rows, const In* panel, std::size_t kp, Out* out) {
  amx_configure_tiles();
  constexpr std::size_t kDepth = 64 / sizeof(In);  // k-steps per B tile
  constexpr std::size_t kGroup = 4 / sizeof(In);   // k-steps per panel row
  const auto a_stride = static_cast<long>(lda * sizeof(In));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(panel);
  _tile_zero(0);
  _tile_zero(1);
  const bool two_row_groups = rows > 16;
  if (two_row_groups) {
    _tile_zero(2);
    _tile_zero(3);
  }
  for (std::size_t k = 0; k < kp; k += kDepth) {
    const std::uint8_t* b = bytes + (k / kGroup) * kPanelBytes;
    _tile_loadd(4, a + k, a_stride);
    _tile_loadd(6, b, static_cast<long>(kPanelBytes));
    _tile_loadd(7, b + 64, static_cast<long>(kPanelBytes));
    if constexpr (Int8) {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
    } else {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
    }
    if (two_row_groups) {
      _tile_loadd(5, a + 16 * lda + k, a_stride);
      if constexpr (Int8) {
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
      } else {
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
  _tile_stored(0, out, kOutStride);
  _tile_stored(1, out + 16, kOutStride);
  if (two_row_groups) {
    _tile_stored(2, out + 16 * 32, kOutStride);
    _tile_stored(3, out + 16 * 32 + 16, kOutStride);
  }
}

}  // namespace

void amx_configure_tiles() noexcept {
  if (t_configured) return;
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  // Not _tile_loadconfig: GCC 12 declares its operand as the first 8 bytes only, and then
  // drops the stores to the rest of the configuration as dead (every tile 0 x 0: the next
  // tile instruction faults). The whole 64-byte object is this asm's input.
  __asm__ volatile("ldtilecfg %0" : : "m"(config));
  t_configured = true;
}

void int8_tile_amx(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                   std::size_t kp, std::int32_t* out) {
  static_assert(kInt8PanelWidth == 32 && kInt8AmxDepth == 64);
  tile_32x32<true>(a, lda, rows, panel, kp, out);
}

void bf16_tile_amx(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                   std::size_t kp, float* out) {
  static_assert(kBf16PanelWidth == 32 && kBf16AmxDepth == 32);
  tile_32x32<false>(a, lda, rows, panel, kp, out);
}

}  // namespace warden::kernels::detail

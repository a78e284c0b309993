#pragma once
// Int8 dense layers (a model runs them through kernels/dense.hpp with --dtype int8).
//
// W [n x k] is quantised once at construction, symmetrically per output row:
// scale_j = max|W_j| / 127, q = round(w / scale_j) clamped to [-127, 127]. Each row of A is
// quantised the same way on every call (one scale per row). The products are summed in
// int32 (AMX tiles or AVX-512 VNNI where the CPU has them, else AVX2, else plain C++), and dequantisation
// (row_scale · col_scale), bias, activation and residual happen in one epilogue.
//
// Packed layout: column panels of kInt8PanelWidth output rows, k padded with zeros to a
// multiple of 4 (of 64 for the AMX tile, whose B tiles hold 64 k-steps), stored as
// [k/4][panel width][4] int8 — one 64-byte line holds 4 k-steps of 16 columns, exactly what
// vpdpbusd consumes, and 16 such lines at a stride of one panel row are an AMX B tile.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/arena.hpp"
#include "core/cpu_features.hpp"
#include "kernels/gemm.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

// W quantised symmetrically per output row: values [n x k] row-major, scales [n]
// (w ≈ value · scale). What QuantizedLinear packs and `warden quantize` saves.
struct QuantizedRows {
  std::vector<std::int8_t> values;
  std::vector<float> scales;
};

// scale_j = max|W_j| / 127 (0 for an all-zero row, or one so small that it underflows),
// q = round-half-even(w / scale_j) clamped to [-127, 127]. Throws Error(CorruptFile) on a non-finite weight.
QuantizedRows quantize_rows(std::span<const float> weight, std::size_t n, std::size_t k);

// The int32 tile a QuantizedLinear runs (all give the same sums).
enum class Int8Kernel {
  Portable,    // plain C++
  Avx2,        // vpmaddwd on sign-extended int16 (no VNNI)
  Avx512Vnni,  // vpdpbusd
  Amx,         // tdpbssd on 16 x 64-byte tiles
};

class QuantizedLinear {
 public:
  QuantizedLinear() = default;
  // weight: n*k floats, row-major [n x k]; bias: n floats or empty (zero bias). isa picks
  // the int32 kernel: Amx uses AMX tiles when the process may (else as Avx512); Avx512 uses
  // VNNI when the CPU has it, else the AVX2 tile (every AVX-512 CPU has AVX2); Avx2 uses the
  // AVX2 tile; anything else (or an ISA the CPU lacks) is portable.
  QuantizedLinear(std::span<const float> weight, std::size_t n, std::size_t k, std::span<const float> bias,
                  Isa isa = active_isa());
  // From weights quantised already (a checkpoint `warden quantize` wrote): bit-identical to
  // the float constructor given the weights those rows were quantised from.
  QuantizedLinear(const QuantizedRows& rows, std::size_t n, std::size_t k, std::span<const float> bias,
                  Isa isa = active_isa());
  // An n x k layer to be filled with set_rows. With an arena (which must outlive the layer)
  // the packed data lives there, else in its own; over a prefilled arena the layer is
  // ready as it is (set_rows must not be called).
  QuantizedLinear(std::size_t n, std::size_t k, Isa isa, Arena* arena);

  // Bytes an arena must provide for one such layer (alignment included).
  [[nodiscard]] static std::size_t arena_bytes(std::size_t n, std::size_t k, Isa isa = active_isa());

  // Packs all n rows (rows.values [n x k], rows.scales [n]) and the bias (n floats or empty).
  // Throws Error(CorruptFile) on a negative or non-finite scale.
  void set_rows(const QuantizedRows& rows, std::span<const float> bias);

  // Panels [first, first + count) as a layer of their own (the columns first·32 onwards),
  // sharing this layer's storage: for products that need only some columns.
  [[nodiscard]] QuantizedLinear panel_range(std::size_t first, std::size_t count) const;

  [[nodiscard]] std::size_t n() const noexcept { return n_; }
  [[nodiscard]] std::size_t k() const noexcept { return k_; }
  // k rounded up to a multiple of 4 (64 for the AMX tile): the packed depth.
  [[nodiscard]] std::size_t k_padded() const noexcept { return kp_; }
  [[nodiscard]] Isa isa() const noexcept { return isa_; }
  // The int32 tile linear_int8 runs for this layer.
  [[nodiscard]] Int8Kernel kernel() const noexcept { return kernel_; }
  // Whether that is the AVX-512 VNNI tile.
  [[nodiscard]] bool uses_vnni() const noexcept { return kernel_ == Int8Kernel::Avx512Vnni; }
  [[nodiscard]] const std::int8_t* panels() const noexcept { return panels_.data(); }
  [[nodiscard]] const float* scales() const noexcept { return scales_.data(); }     // per column
  [[nodiscard]] const float* bias() const noexcept { return bias_.data(); }         // per column
  [[nodiscard]] const std::int32_t* sums() const noexcept { return sums_.data(); }  // Σ_k q[j,k]
  // Resident bytes of the packed layer.
  [[nodiscard]] std::size_t bytes() const noexcept {
    return panels_.size() + (scales_.size() + bias_.size()) * sizeof(float) +
           sums_.size() * sizeof(std::int32_t);
  }

 private:
  std::size_t n_ = 0;
  std::size_t k_ = 0;
  std::size_t kp_ = 0;
  Isa isa_ = Isa::Portable;
  Int8Kernel kernel_ = Int8Kernel::Portable;
  Arena own_;                      // the storage when no arena was given
  std::span<std::int8_t> panels_;  // ceil(n/width) panels of [kp/4][width][4]
  std::span<float> scales_;        // padded to a whole panel (padding: 0)
  std::span<float> bias_;
  std::span<std::int32_t> sums_;
};

// C[m x n] = act(dequant(quant(A) · Wqᵀ) + b) (+ R). Rows of A are quantised dynamically
// (symmetric, scale = max|row| / 127; an all-zero row gives C = act(b) (+ R) exactly).
// A has row stride lda, C row stride ldc; C may alias R exactly (same pointer and stride).
// pool may be null; with one, row blocks x column panels are spread over its threads.
// The row quantiser and the float epilogue are chosen by the machine (AVX-512 when active_isa() is Avx512,
// AVX2 when it is Avx2, each with its vectorised GELU; else plain C++), never by the layer: every int32
// kernel's sums go through the same float code, so kernels that agree on the sums agree bit for bit.
void linear_int8(const float* a, std::size_t lda, std::size_t m, const QuantizedLinear& w, float* c,
                 std::size_t ldc, const Epilogue& epilogue = {}, ThreadPool* pool = nullptr);

namespace detail {

inline constexpr std::size_t kInt8PanelWidth = 32;
inline constexpr std::size_t kInt8MR = 6;         // rows of the portable and AVX2 tiles
inline constexpr std::size_t kInt8VnniMR = 8;     // rows of the VNNI tile
inline constexpr std::size_t kInt8AmxRows = 32;   // rows of the AMX tile
inline constexpr std::size_t kInt8AmxDepth = 64;  // k-steps per AMX B tile

// Exact int32 sums of one tile: out[r][j] = Σ_k a[r*lda + k] · panel[k/4][j][k%4] for
// r < rows (<= kInt8MR), all kInt8PanelWidth columns, k < kp (a multiple of 4). a holds
// int8 rows padded with zeros to kp; sums is the panel's Σ_k q (used by the VNNI kernel).
void int8_tile_portable(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                        std::size_t kp, const std::int32_t* sums, std::int32_t* out);
void int8_tile_avx2(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                    std::size_t kp, const std::int32_t* sums, std::int32_t* out);
// The VNNI tile (rows <= kInt8VnniMR): its rows come offset by 128 (each byte q as the unsigned q + 128, what
// int8_offset_row makes of a quantised row); its sums are still those of the signed rows.
void int8_tile_avx512_vnni(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                           std::size_t kp, const std::int32_t* sums, std::int32_t* out);
// In place: each of the kp bytes q of a quantised row becomes q + 128 read as unsigned.
void int8_offset_row(std::int8_t* row, std::size_t kp);

// The AMX tile: out[r][j] (row stride kInt8PanelWidth) for r < rows (<= kInt8AmxRows), all
// kInt8PanelWidth columns, k < kp (a multiple of kInt8AmxDepth). It reads whole 16-row
// groups of a (stride lda), so a must have 16 rows of memory (32 when rows > 16); rows past
// `rows` may hold anything, and out's rows past `rows` are then meaningless.
void int8_tile_amx(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                   std::size_t kp, std::int32_t* out);

// The epilogue of one tile (rows <= kInt8AmxRows, cols <= kInt8PanelWidth; acc as above):
// c[r][j] = act(acc[r][j] · row_scales[r] · col_scales[j] + bias[j]) (+ residual[r][j]).
void int8_epilogue_avx512(const std::int32_t* acc, std::size_t rows, std::size_t cols,
                          const float* row_scales, const float* col_scales, const float* bias, Activation act,
                          const float* residual, std::size_t ldr, float* c, std::size_t ldc);
void int8_epilogue_avx2(const std::int32_t* acc, std::size_t rows, std::size_t cols, const float* row_scales,
                        const float* col_scales, const float* bias, Activation act, const float* residual,
                        std::size_t ldr, float* c, std::size_t ldc);

// Dynamic quantisation of one row of A (k floats) into kp int8 (zero-padded); returns the
// row's scale (0 for an all-zero or non-finite row, which is then all zero). All three give
// the same numbers: round to nearest even of clamp(x · inv, -127, 127) with inv = 127 / max|x|
// (capped at FLT_MAX for rows so tiny that it overflows), scale max|x| / 127.
float int8_quantize_row_portable(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst);
float int8_quantize_row_avx512(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst);
float int8_quantize_row_avx2(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst);

}  // namespace detail

}  // namespace warden::kernels

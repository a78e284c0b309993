#pragma once
// bfloat16 dense layers: weights stored in bf16, fp32 accumulation (a model runs them through
// kernels/dense.hpp with --dtype bfloat16).
//
// W [n x k] is rounded to bf16 once at construction (round to nearest even; a NaN stays a
// NaN), which halves the resident weights and the bytes streamed per call. Each call rounds
// the rows of A to bf16 the same way, then sums the products in fp32: a product of two bf16
// values is exact in fp32, so against a float64 reference on the rounded inputs only the
// summation order differs (and vdpbf16ps treats denormal bf16 inputs as zero). Bias,
// activation and residual are applied in the same epilogue as linear().
//
// Kernels: AMX tiles (tdpbf16ps) when the layer's isa is Amx and the process has AMX-BF16;
// AVX-512 BF16 (vdpbf16ps, two k-steps per instruction) when the layer's isa is
// Avx512 (or Amx) and the CPU has avx512_bf16; AVX-512F (bf16 widened to fp32 with shifts, then FMA)
// when it has AVX-512 without BF16; the same widening with AVX2 + FMA for isa Avx2; plain
// C++ otherwise.
//
// Packed layout: column panels of kBf16PanelWidth output rows, k padded with zeros to an
// even depth (a multiple of 32 for AMX, whose B tiles hold 32 k-steps), stored as
// [k/2][panel width][2] bf16 — one 64-byte line holds 2 k-steps of 16 columns, exactly what
// vdpbf16ps consumes, and 16 such lines at a stride of one panel row are an AMX B tile.

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/arena.hpp"
#include "core/cpu_features.hpp"
#include "kernels/gemm.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

class Bf16Linear {
 public:
  Bf16Linear() = default;
  // weight: n*k floats, row-major [n x k] (PyTorch's nn.Linear layout); bias: n floats or
  // empty (zero bias). The weights are rounded to bf16 and packed.
  Bf16Linear(std::span<const float> weight, std::size_t n, std::size_t k, std::span<const float> bias,
             Isa isa = active_isa());
  // The same from weights already in bf16 (raw bit patterns, row-major [n x k]), e.g. a BF16
  // safetensors checkpoint. Nothing is rounded: the layer is bit-identical to the float
  // constructor fed with the widened values.
  [[nodiscard]] static Bf16Linear from_bf16(std::span<const std::uint16_t> weight, std::size_t n,
                                            std::size_t k, std::span<const float> bias,
                                            Isa isa = active_isa());
  // An n x k layer to be filled with set_weights / set_bf16_weights. With an arena (which
  // must outlive the layer) the packed data lives there, else in its own; over a prefilled
  // arena the layer is ready as it is (neither setter may be called).
  Bf16Linear(std::size_t n, std::size_t k, Isa isa, Arena* arena);

  // Bytes an arena must provide for one such layer (alignment included).
  [[nodiscard]] static std::size_t arena_bytes(std::size_t n, std::size_t k, Isa isa = active_isa());

  // Packs W [n x k] (rounded to bf16, or raw bf16 bit patterns) and the bias (n floats or empty).
  void set_weights(std::span<const float> weight, std::span<const float> bias);
  void set_bf16_weights(std::span<const std::uint16_t> weight, std::span<const float> bias);

  // Panels [first, first + count) as a layer of their own (the columns first·32 onwards),
  // sharing this layer's storage: for products that need only some columns.
  [[nodiscard]] Bf16Linear panel_range(std::size_t first, std::size_t count) const;

  [[nodiscard]] std::size_t n() const noexcept { return n_; }
  [[nodiscard]] std::size_t k() const noexcept { return k_; }
  // k rounded up to even (to a multiple of 32 for AMX): the packed depth.
  [[nodiscard]] std::size_t k_padded() const noexcept { return kp_; }
  [[nodiscard]] Isa isa() const noexcept { return isa_; }
  // Whether linear_bf16 runs the AVX-512 BF16 (vdpbf16ps) kernel for this layer.
  [[nodiscard]] bool uses_avx512_bf16() const noexcept { return kernel_ == Kernel::Avx512Bf16; }
  // Whether it runs the AVX-512F kernel (the CPU has AVX-512 but not its BF16 extension).
  [[nodiscard]] bool uses_avx512() const noexcept { return kernel_ == Kernel::Avx512; }
  // Whether it runs the AVX2 kernel (isa Avx2).
  [[nodiscard]] bool uses_avx2() const noexcept { return kernel_ == Kernel::Avx2; }
  // Whether it runs on AMX tiles (isa Amx on a CPU with AMX-BF16).
  [[nodiscard]] bool uses_amx() const noexcept { return kernel_ == Kernel::Amx; }
  [[nodiscard]] const std::uint16_t* panels() const noexcept { return panels_.data(); }
  [[nodiscard]] const float* bias() const noexcept { return bias_.data(); }  // per column
  // Resident bytes of the packed layer.
  [[nodiscard]] std::size_t bytes() const noexcept {
    return panels_.size() * sizeof(std::uint16_t) + bias_.size() * sizeof(float);
  }

 private:
  enum class Kernel { Portable, Avx2, Avx512, Avx512Bf16, Amx };
  static Kernel kernel_for(Isa isa);
  static std::size_t depth_for(std::size_t k, Kernel kernel);
  void pack(const std::uint16_t* weight, std::span<const float> bias);

  std::size_t n_ = 0;
  std::size_t k_ = 0;
  std::size_t kp_ = 0;
  Isa isa_ = Isa::Portable;
  Kernel kernel_ = Kernel::Portable;
  Arena own_;                        // the storage when no arena was given
  std::span<std::uint16_t> panels_;  // ceil(n/width) panels of [kp/2][width][2]
  std::span<float> bias_;            // padded to a whole panel (padding: 0)
};

// C[m x n] = act(A·Wᵀ + b) (+ R): the rows of A are rounded to bf16 on each call, the
// products summed in fp32. The same contract as linear(): A has row stride lda, C row
// stride ldc; C must not alias A (it may alias R exactly: the same pointer and stride);
// pool may be null. Non-finite values propagate as IEEE arithmetic has them (a NaN in a row
// of A makes that row of C NaN); unlike linear_int8 nothing is zeroed. An all-zero row of A
// gives act(b) (+ R) exactly. The rounding of A and the float epilogue are chosen by the
// machine (AVX-512 or AVX2 after active_isa(), with their vectorised GELU; else plain C++),
// the dot-product kernel by the layer.
void linear_bf16(const float* a, std::size_t lda, std::size_t m, const Bf16Linear& w, float* c,
                 std::size_t ldc, const Epilogue& epilogue = {}, ThreadPool* pool = nullptr);

namespace detail {

inline constexpr std::size_t kBf16PanelWidth = 32;
inline constexpr std::size_t kBf16MR = 12;

// float -> bf16 bits, round to nearest even; a NaN stays a (quiet) NaN with its sign. And
// back (exact). Defined in gemm_bf16.cpp, not inline: an ISA file that used an inline copy
// could have its AVX-512 build of it picked by the linker for every caller.
[[nodiscard]] std::uint16_t to_bf16(float x) noexcept;
[[nodiscard]] float from_bf16(std::uint16_t h) noexcept;

// fp32 sums of one tile: out[r][j] = Σ_k a[r*lda + k] · panel[k/2][j][k%2] for r < rows
// (<= kBf16MR), all kBf16PanelWidth columns, k < kp (even); a holds bf16 rows zero-padded
// to kp, panel is 64-byte aligned, out a 64-byte aligned kBf16MR x 32 tile.
void bf16_tile_portable(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                        std::size_t kp, float* out);
void bf16_tile_avx512(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                      std::size_t kp, float* out);
void bf16_tile_avx2(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                    std::size_t kp, float* out);
void bf16_tile_avx512_bf16(const std::uint16_t* a, std::size_t lda, std::size_t rows,
                           const std::uint16_t* panel, std::size_t kp, float* out);
inline constexpr std::size_t kBf16AmxRows = 32;   // rows of the AMX tile
inline constexpr std::size_t kBf16AmxDepth = 32;  // k-steps per AMX B tile
// The AMX tile: rows <= kBf16AmxRows, kp a multiple of kBf16AmxDepth, out kBf16AmxRows x 32.
// It reads whole 16-row groups of a (stride lda): a must have 16 rows of memory (32 when
// rows > 16); rows past `rows` may hold anything, and out's rows past `rows` are meaningless.
void bf16_tile_amx(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                   std::size_t kp, float* out);

// One row of A (k floats) to kp bf16 (zero-padded): the same bits as to_bf16.
void bf16_round_row_portable(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst);
void bf16_round_row_avx512(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst);
void bf16_round_row_avx2(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst);

// The epilogue of one tile (rows <= kBf16MR, cols <= kBf16PanelWidth; acc as above):
// c[r][j] = act(acc[r][j] + bias[j]) (+ residual[r][j]).
void bf16_epilogue_avx512(const float* acc, std::size_t rows, std::size_t cols, const float* bias,
                          Activation act, const float* residual, std::size_t ldr, float* c, std::size_t ldc);
void bf16_epilogue_avx2(const float* acc, std::size_t rows, std::size_t cols, const float* bias,
                        Activation act, const float* residual, std::size_t ldr, float* c, std::size_t ldc);

}  // namespace detail

}  // namespace warden::kernels

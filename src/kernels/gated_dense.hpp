#pragma once
// Gated feed-forward input layers (GLU variants: GEGLU, ReGLU, SwiGLU): one product gives two
// halves, and the layer's output is act(first half) ⊙ second half. The halves are packed as
// one dense layer, each padded to whole panels, so that any column range of the output is two
// panel ranges of the product. Each task computes its rows of both ranges into a scratch block
// that stays in cache and writes only the gated result: the 2·width-wide product is never
// stored in memory, only the width-wide output (the gate is the GEMM's epilogue, applied per
// task rather than per register tile so that every precision shares it).

#include <cstddef>
#include <span>

#include "core/arena.hpp"
#include "core/precision.hpp"
#include "kernels/activation.hpp"
#include "kernels/dense.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

class GatedDense {
 public:
  GatedDense() = default;
  // activated, gate: [width x k] row-major each; biases: width floats or empty (zero). Packed
  // in `precision` into `arena` when given (which must outlive the layer).
  static GatedDense make(Precision precision, std::span<const float> activated, std::span<const float> gate,
                         std::size_t width, std::size_t k, std::span<const float> activated_bias,
                         std::span<const float> gate_bias, Isa isa = active_isa(), Arena* arena = nullptr);
  // The layer a prefilled arena holds next (see DenseLayer::prefilled).
  static GatedDense prefilled(Precision precision, std::size_t width, std::size_t k, Isa isa, Arena& arena);
  [[nodiscard]] static std::size_t arena_bytes(Precision precision, std::size_t width, std::size_t k,
                                               Isa isa = active_isa());

  [[nodiscard]] std::size_t width() const noexcept { return width_; }  // output columns
  [[nodiscard]] std::size_t k() const noexcept { return both_.k(); }
  [[nodiscard]] Precision precision() const noexcept { return both_.precision(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return both_.bytes(); }
  [[nodiscard]] const DenseLayer& product() const noexcept { return both_; }
  // Rows of each padded half (a multiple of the layer's panel width).
  [[nodiscard]] std::size_t half() const noexcept { return half_; }

 private:
  GatedDense(DenseLayer both, std::size_t width, std::size_t half)
      : both_(std::move(both)), width_(width), half_(half) {}
  DenseLayer both_;  // [2·half x k]: activated rows, zero rows, gate rows, zero rows
  std::size_t width_ = 0;
  std::size_t half_ = 0;
};

// C[m x width] = act(A·W_aᵀ + b_a) ⊙ (A·W_gᵀ + b_g). A has row stride lda, C row stride ldc;
// C must not alias A. pool may be null.
void gated_dense(const float* a, std::size_t lda, std::size_t m, const GatedDense& w, Activation act,
                 float* c, std::size_t ldc, ThreadPool* pool = nullptr);

namespace detail {
// out[r][j] = act(x[r][j]) · gate[r][j] for r < rows, j < width (x and gate row stride ldx,
// out row stride ldo): the gate, per instruction set.
void glu_rows_portable(const float* x, const float* gate, std::size_t ldx, std::size_t rows,
                       std::size_t width, Activation act, float* out, std::size_t ldo);
void glu_rows_avx2(const float* x, const float* gate, std::size_t ldx, std::size_t rows, std::size_t width,
                   Activation act, float* out, std::size_t ldo);
void glu_rows_avx512(const float* x, const float* gate, std::size_t ldx, std::size_t rows, std::size_t width,
                     Activation act, float* out, std::size_t ldo);
}  // namespace detail

}  // namespace warden::kernels

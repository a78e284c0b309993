#pragma once
// Dense layers: C = act(A·Wᵀ + b) (+ R), the operation that dominates an encoder's time.
//
// W arrives in PyTorch's nn.Linear layout, [n x k] row-major, and is repacked once at load
// into column panels of the micro-kernel's width (k rows of NR contiguous floats each), so
// the inner loop streams weights with aligned loads. Bias, activation and residual are
// applied to the accumulators before they are stored: one pass over C instead of three.

#include <cstddef>
#include <span>

#include "core/aligned_buffer.hpp"
#include "core/arena.hpp"
#include "core/cpu_features.hpp"
#include "kernels/activation.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

class PackedLinear {
 public:
  PackedLinear() = default;
  // weight: n*k floats, row-major [n x k]; bias: n floats or empty (zero bias).
  PackedLinear(std::span<const float> weight, std::size_t n, std::size_t k, std::span<const float> bias,
               Isa isa = active_isa());
  // An n x k layer to be filled with set_rows (e.g. Q, K and V stacked). With an arena
  // (which must outlive the layer) the packed data lives there, else in its own; over a
  // prefilled arena the layer is ready as it is (set_rows must not be called).
  PackedLinear(std::size_t n, std::size_t k, Isa isa = active_isa(), Arena* arena = nullptr);

  // Bytes an arena must provide for one such layer (alignment included).
  [[nodiscard]] static std::size_t arena_bytes(std::size_t n, std::size_t k, Isa isa = active_isa());
  // The panel width (output columns per panel) of layers packed for `isa`.
  [[nodiscard]] static std::size_t panel_width_for(Isa isa) noexcept;

  // Packs rows [row0, row0 + rows) of W (weight: rows*k floats, row-major) and their bias
  // (rows floats, or empty for zero).
  void set_rows(std::size_t row0, std::size_t rows, std::span<const float> weight,
                std::span<const float> bias);

  // Panels [first, first + count) as a layer of their own (the columns first·panel_width()
  // onwards), sharing this layer's storage: for products that need only some columns.
  [[nodiscard]] PackedLinear panel_range(std::size_t first, std::size_t count) const;

  [[nodiscard]] std::size_t n() const noexcept { return n_; }
  [[nodiscard]] std::size_t k() const noexcept { return k_; }
  [[nodiscard]] Isa isa() const noexcept { return isa_; }
  [[nodiscard]] std::size_t panel_width() const noexcept { return nr_; }
  [[nodiscard]] const float* panels() const noexcept { return panels_.data(); }
  [[nodiscard]] const float* bias() const noexcept { return bias_.data(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return (panels_.size() + bias_.size()) * sizeof(float); }

 private:
  std::size_t n_ = 0;
  std::size_t k_ = 0;
  std::size_t nr_ = 0;
  Isa isa_ = Isa::Portable;
  Arena own_;                // the storage when no arena was given
  std::span<float> panels_;  // ceil(n/nr) panels of [k][nr]
  std::span<float> bias_;    // padded to a whole panel
};

struct Epilogue {
  Activation activation = Activation::None;
  const float* residual = nullptr;  // added after the activation; m x n, stride ldr
  std::size_t ldr = 0;
};

// C[m x n] = act(A[m x k] · Wᵀ + b) (+ R). A has row stride lda, C row stride ldc; C must
// not alias A (it may alias R exactly: the same pointer and stride). pool may be null.
void linear(const float* a, std::size_t lda, std::size_t m, const PackedLinear& w, float* c, std::size_t ldc,
            const Epilogue& epilogue = {}, ThreadPool* pool = nullptr);

}  // namespace warden::kernels

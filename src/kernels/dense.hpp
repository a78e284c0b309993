#pragma once
// A dense layer in any of the precisions Warden runs (docs/precision.md), so that a model is written
// once and loaded as float32, bfloat16 or int8:
//   Float32   PackedLinear     exact float32 (the reference)
//   BFloat16  Bf16Linear       bf16 weights and activations, float32 sums (vdpbf16ps)
//   Int8      QuantizedLinear  int8 weights per output row, activations per token row, int32 sums
// Every precision takes float32 activations and writes float32 results with the same fused
// epilogue (bias, activation, residual): only the products change.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "core/precision.hpp"
#include "kernels/gemm.hpp"
#include "kernels/gemm_bf16.hpp"
#include "kernels/gemm_int8.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

class DenseLayer {
 public:
  DenseLayer() = default;
  explicit DenseLayer(PackedLinear layer) : layer_(std::move(layer)) {}
  explicit DenseLayer(QuantizedLinear layer) : layer_(std::move(layer)) {}
  explicit DenseLayer(Bf16Linear layer) : layer_(std::move(layer)) {}

  // W [n x k] row-major (nn.Linear's layout) and its bias (n floats or empty), packed in
  // `precision`, into `arena` when given (which must outlive the layer) and not prefilled.
  static DenseLayer make(Precision precision, std::span<const float> weight, std::size_t n, std::size_t k,
                         std::span<const float> bias, Isa isa = active_isa(), Arena* arena = nullptr);
  // The layer a prefilled arena holds next (saved from a layer of the same precision, shape
  // and isa, taken from the arena in the same order): nothing is packed.
  static DenseLayer prefilled(Precision precision, std::size_t n, std::size_t k, Isa isa, Arena& arena);
  // Bytes an arena must provide for one n x k layer in `precision`.
  [[nodiscard]] static std::size_t arena_bytes(Precision precision, std::size_t n, std::size_t k,
                                               Isa isa = active_isa());

  [[nodiscard]] Precision precision() const noexcept;
  [[nodiscard]] std::size_t n() const noexcept;
  [[nodiscard]] std::size_t k() const noexcept;
  // Resident bytes of the packed weights, scales and bias.
  [[nodiscard]] std::size_t bytes() const noexcept;
  // Output columns per packed panel, and panels [first, first + count) as a layer of their
  // own sharing this one's storage (see PackedLinear::panel_range).
  [[nodiscard]] std::size_t panel_width() const noexcept;
  // The panel width of layers of that precision packed for `isa`.
  [[nodiscard]] static std::size_t panel_width_for(Precision precision, Isa isa) noexcept;
  [[nodiscard]] DenseLayer panel_range(std::size_t first, std::size_t count) const;

  template <typename Visitor>
  decltype(auto) visit(Visitor&& visitor) const {
    return std::visit(std::forward<Visitor>(visitor), layer_);
  }

 private:
  std::variant<PackedLinear, QuantizedLinear, Bf16Linear> layer_;
};

// C[m x n] = act(A·Wᵀ + b) (+ R) in the layer's precision; the contract of linear().
void dense(const float* a, std::size_t lda, std::size_t m, const DenseLayer& w, float* c, std::size_t ldc,
           const Epilogue& epilogue = {}, ThreadPool* pool = nullptr);

}  // namespace warden::kernels

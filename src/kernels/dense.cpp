#include "kernels/dense.hpp"

#include <array>

#include "core/error.hpp"

namespace warden::kernels {

namespace {

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

DenseLayer DenseLayer::make(Precision precision, std::span<const float> weight, std::size_t n, std::size_t k,
                            std::span<const float> bias, Isa isa, Arena* arena) {
  switch (precision) {
    case Precision::Float32: {
      PackedLinear layer(n, k, isa, arena);
      layer.set_rows(0, n, weight, bias);
      return DenseLayer(std::move(layer));
    }
    case Precision::Int8: {
      QuantizedLinear layer(n, k, isa, arena);
      layer.set_rows(quantize_rows(weight, n, k), bias);
      return DenseLayer(std::move(layer));
    }
    case Precision::BFloat16: {
      Bf16Linear layer(n, k, isa, arena);
      layer.set_weights(weight, bias);
      return DenseLayer(std::move(layer));
    }
  }
  throw Error(ErrorKind::Internal, "DenseLayer: unknown precision");
}

DenseLayer DenseLayer::prefilled(Precision precision, std::size_t n, std::size_t k, Isa isa, Arena& arena) {
  if (!arena.prefilled()) throw Error(ErrorKind::Internal, "DenseLayer::prefilled: the arena is empty");
  switch (precision) {
    case Precision::Float32:
      return DenseLayer(PackedLinear(n, k, isa, &arena));
    case Precision::Int8:
      return DenseLayer(QuantizedLinear(n, k, isa, &arena));
    case Precision::BFloat16:
      return DenseLayer(Bf16Linear(n, k, isa, &arena));
  }
  throw Error(ErrorKind::Internal, "DenseLayer: unknown precision");
}

std::size_t DenseLayer::arena_bytes(Precision precision, std::size_t n, std::size_t k, Isa isa) {
  switch (precision) {
    case Precision::Float32:
      return PackedLinear::arena_bytes(n, k, isa);
    case Precision::Int8:
      return QuantizedLinear::arena_bytes(n, k, isa);
    case Precision::BFloat16:
      return Bf16Linear::arena_bytes(n, k, isa);
  }
  throw Error(ErrorKind::Internal, "DenseLayer: unknown precision");
}

Precision DenseLayer::precision() const noexcept {
  return visit(Overloaded{[](const PackedLinear&) { return Precision::Float32; },
                          [](const QuantizedLinear&) { return Precision::Int8; },
                          [](const Bf16Linear&) { return Precision::BFloat16; }});
}

std::size_t DenseLayer::n() const noexcept {
  return visit([](const auto& l) { return l.n(); });
}

std::size_t DenseLayer::k() const noexcept {
  return visit([](const auto& l) { return l.k(); });
}

std::size_t DenseLayer::bytes() const noexcept {
  return visit([](const auto& l) { return l.bytes(); });
}

std::size_t DenseLayer::panel_width() const noexcept {
  return visit(Overloaded{[](const PackedLinear& l) { return l.panel_width(); },
                          [](const QuantizedLinear&) { return detail::kInt8PanelWidth; },
                          [](const Bf16Linear&) { return detail::kBf16PanelWidth; }});
}

std::size_t DenseLayer::panel_width_for(Precision precision, Isa isa) noexcept {
  switch (precision) {
    case Precision::Int8:
      return detail::kInt8PanelWidth;
    case Precision::BFloat16:
      return detail::kBf16PanelWidth;
    case Precision::Float32:
      break;
  }
  return PackedLinear::panel_width_for(isa);
}

DenseLayer DenseLayer::panel_range(std::size_t first, std::size_t count) const {
  return visit([&](const auto& l) { return DenseLayer(l.panel_range(first, count)); });
}

void dense(const float* a, std::size_t lda, std::size_t m, const DenseLayer& w, float* c, std::size_t ldc,
           const Epilogue& epilogue, ThreadPool* pool) {
  w.visit(Overloaded{
      [&](const PackedLinear& l) { linear(a, lda, m, l, c, ldc, epilogue, pool); },
      [&](const QuantizedLinear& l) { linear_int8(a, lda, m, l, c, ldc, epilogue, pool); },
      [&](const Bf16Linear& l) { linear_bf16(a, lda, m, l, c, ldc, epilogue, pool); },
  });
}

}  // namespace warden::kernels

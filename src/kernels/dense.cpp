#include "kernels/dense.hpp"

#include <array>

#include "core/error.hpp"

namespace warden::kernels {

namespace {

struct PrecisionName {
  std::string_view name;
  Precision precision;
};

constexpr std::array<PrecisionName, 9> kNames{{
    {"float32", Precision::Float32},
    {"fp32", Precision::Float32},
    {"f32", Precision::Float32},
    {"bfloat16", Precision::BFloat16},
    {"bf16", Precision::BFloat16},
    {"int8", Precision::Int8},
    {"i8", Precision::Int8},
    {"qint8", Precision::Int8},
    {"float", Precision::Float32},
}};

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

std::string_view precision_name(Precision precision) noexcept {
  switch (precision) {
    case Precision::Float32:
      return "float32";
    case Precision::BFloat16:
      return "bfloat16";
    case Precision::Int8:
      return "int8";
  }
  return "float32";
}

std::optional<Precision> parse_precision(std::string_view name) noexcept {
  for (const auto& n : kNames) {
    if (n.name == name) return n.precision;
  }
  return std::nullopt;
}

Precision fastest_precision() noexcept {
  // Measured (docs/benchmarks.md): int8 is 2.5-2.9x float32 with VNNI and 1.25-1.5x on
  // AVX2 alone; on AVX-512 without VNNI the AVX2 int8 tile loses to AVX-512 float32.
  const CpuFeatures& cpu = cpu_features();
  switch (active_isa()) {
    case Isa::Avx512:
      if (cpu.avx512_vnni) return Precision::Int8;
      return cpu.avx512_bf16 ? Precision::BFloat16 : Precision::Float32;
    case Isa::Avx2:
      return Precision::Int8;
    case Isa::Portable:
    case Isa::Neon:
      break;
  }
  return Precision::Float32;
}

DenseLayer DenseLayer::make(Precision precision, std::span<const float> weight, std::size_t n, std::size_t k,
                            std::span<const float> bias, Isa isa) {
  switch (precision) {
    case Precision::Float32:
      return DenseLayer(PackedLinear(weight, n, k, bias, isa));
    case Precision::Int8:
      return DenseLayer(QuantizedLinear(weight, n, k, bias, isa));
    case Precision::BFloat16:
      return DenseLayer(Bf16Linear(weight, n, k, bias, isa));
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

void dense(const float* a, std::size_t lda, std::size_t m, const DenseLayer& w, float* c, std::size_t ldc,
           const Epilogue& epilogue, ThreadPool* pool) {
  w.visit(Overloaded{
      [&](const PackedLinear& l) { linear(a, lda, m, l, c, ldc, epilogue, pool); },
      [&](const QuantizedLinear& l) { linear_int8(a, lda, m, l, c, ldc, epilogue, pool); },
      [&](const Bf16Linear& l) { linear_bf16(a, lda, m, l, c, ldc, epilogue, pool); },
  });
}

}  // namespace warden::kernels

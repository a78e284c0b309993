#include "core/precision.hpp"

#include <array>

#include "core/cpu_features.hpp"

namespace warden {

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

Precision fastest_precision() noexcept {
  // Measured (docs/benchmarks.md): int8 is 2.5-2.9x float32 with VNNI and 1.25-1.5x on
  // AVX2 alone; on AVX-512 without VNNI the AVX2 int8 tile loses to AVX-512 float32.
  const CpuFeatures& cpu = cpu_features();
  switch (active_isa()) {
    case Isa::Amx:
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

std::optional<Precision> parse_precision(std::string_view name) noexcept {
  for (const auto& n : kNames) {
    if (n.name == name) return n.precision;
  }
  return std::nullopt;
}

}  // namespace warden

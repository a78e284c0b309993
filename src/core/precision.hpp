#pragma once
// The precisions a model's dense layers run in (docs/precision.md), and their names: every
// layer that names one (the CLI's --dtype, the catalog, the served models' /info, the model
// loaders) shares this type; the kernels implement each (kernels/dense.hpp).

#include <cstdint>
#include <optional>
#include <string_view>

namespace warden {

enum class Precision : std::uint8_t { Float32, BFloat16, Int8 };

// "float32", "bfloat16", "int8".
std::string_view precision_name(Precision precision) noexcept;
// The names above and the usual aliases (fp32/f32/float, bf16, i8/qint8); nullopt for anything else.
std::optional<Precision> parse_precision(std::string_view name) noexcept;

// The fastest precision this CPU runs that meets the accuracy bar of docs/precision.md:
// int8 with AVX-512 VNNI or on AVX2-only CPUs (where it is 1.25-1.5x float32), bfloat16 with
// AVX-512 BF16 but no VNNI, else float32.
Precision fastest_precision() noexcept;

}  // namespace warden

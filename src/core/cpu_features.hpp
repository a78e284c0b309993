#pragma once
// Which SIMD instruction sets this CPU and OS support, detected once at run time so that
// one binary runs everywhere and uses the widest kernels the machine has.

#include <string_view>

namespace warden {

enum class Isa {
  Portable,  // plain C++, whatever the compiler vectorises
  Avx2,      // AVX2 + FMA (x86-64)
  Avx512,    // AVX-512 F/BW/DQ/VL (x86-64)
  Neon,      // AArch64 Advanced SIMD
  Amx,       // AVX-512 plus AMX tiles for the int8 (and, with AMX-BF16, bf16) products
};

// Whether kernels for `isa` may use AVX-512 (Amx is AVX-512 with tiles on top).
constexpr bool has_avx512(Isa isa) noexcept {
  return isa == Isa::Avx512 || isa == Isa::Amx;
}

struct CpuFeatures {
  bool avx2_fma = false;
  bool avx512 = false;       // F + BW + DQ + VL, with OS support for the ZMM state
  bool avx512_vnni = false;  // int8 dot products
  bool avx512_bf16 = false;  // bf16 dot products
  // AMX tiles with int8 / bf16 products, usable by this process: the CPU has them, the OS
  // saves their state, and Linux granted this process the tile data (arch_prctl).
  bool amx_int8 = false;
  bool amx_bf16 = false;
  bool neon = false;
};

// What the hardware and OS offer (cached after the first call).
const CpuFeatures& cpu_features() noexcept;

// The ISA kernels use: the best the CPU supports, lowered by WARDEN_ISA
// (portable|avx2|avx512|amx|neon) when set, which tests use to cover every path.
// Asking for an ISA the CPU lacks falls back to the best available one.
Isa active_isa() noexcept;

std::string_view isa_name(Isa isa) noexcept;

}  // namespace warden

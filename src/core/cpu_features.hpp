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
};

struct CpuFeatures {
  bool avx2_fma = false;
  bool avx512 = false;       // F + BW + DQ + VL, with OS support for the ZMM state
  bool avx512_vnni = false;  // int8 dot products
  bool avx512_bf16 = false;  // bf16 dot products
  bool neon = false;
};

// What the hardware and OS offer (cached after the first call).
const CpuFeatures& cpu_features() noexcept;

// The ISA kernels use: the best the CPU supports, lowered by WARDEN_ISA
// (portable|avx2|avx512|neon) when set, which tests use to cover every path.
// Asking for an ISA the CPU lacks falls back to the best available one.
Isa active_isa() noexcept;

std::string_view isa_name(Isa isa) noexcept;

}  // namespace warden

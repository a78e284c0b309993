#include "core/cpu_features.hpp"

#include <cstdlib>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace warden {

namespace {

#if defined(__x86_64__) || defined(__i386__)
unsigned long long read_xcr0() {
  unsigned eax = 0;
  unsigned edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

// Linux hands out the 8 KiB of AMX tile state only to processes that ask (since 5.16).
bool request_amx_tiles() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return f;
  const bool osxsave = (ecx & (1U << 27)) != 0;
  const bool fma = (ecx & (1U << 12)) != 0;
  const bool avx = (ecx & (1U << 28)) != 0;
  if (!osxsave || !avx) return f;
  const unsigned long long xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6U) == 0x6U;
  const bool zmm_state = (xcr0 & 0xE6U) == 0xE6U;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return f;
  const bool avx2 = (ebx & (1U << 5)) != 0;
  const bool avx512f = (ebx & (1U << 16)) != 0;
  const bool avx512dq = (ebx & (1U << 17)) != 0;
  const bool avx512bw = (ebx & (1U << 30)) != 0;
  const bool avx512vl = (ebx & (1U << 31)) != 0;
  f.avx2_fma = ymm_state && avx2 && fma;
  f.avx512 = f.avx2_fma && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx512_vnni = f.avx512 && (ecx & (1U << 11)) != 0;
  unsigned eax1 = 0, ebx1 = 0, ecx1 = 0, edx1 = 0;
  if (__get_cpuid_count(7, 1, &eax1, &ebx1, &ecx1, &edx1) != 0) {
    f.avx512_bf16 = f.avx512 && (eax1 & (1U << 5)) != 0;
  }
  const bool amx_tile = (edx & (1U << 24)) != 0;
  const bool tile_state = (xcr0 & 0x60000U) == 0x60000U;  // XTILECFG and XTILEDATA
  if (f.avx512 && amx_tile && tile_state && ((edx & (1U << 25)) != 0 || (edx & (1U << 22)) != 0) &&
      request_amx_tiles()) {
    f.amx_int8 = (edx & (1U << 25)) != 0;
    f.amx_bf16 = (edx & (1U << 22)) != 0;
  }
#elif defined(__aarch64__)
  f.neon = true;
#endif
  return f;
}

Isa best_isa(const CpuFeatures& f) {
  if (f.amx_int8 || f.amx_bf16) return Isa::Amx;
  if (f.avx512) return Isa::Avx512;
  if (f.avx2_fma) return Isa::Avx2;
  if (f.neon) return Isa::Neon;
  return Isa::Portable;
}

bool supported(Isa isa, const CpuFeatures& f) {
  switch (isa) {
    case Isa::Portable:
      return true;
    case Isa::Avx2:
      return f.avx2_fma;
    case Isa::Avx512:
      return f.avx512;
    case Isa::Neon:
      return f.neon;
    case Isa::Amx:
      return f.amx_int8 || f.amx_bf16;
  }
  return false;
}

Isa choose_isa() {
  const CpuFeatures& f = cpu_features();
  const char* requested = std::getenv("WARDEN_ISA");
  if (requested != nullptr) {
    const std::string r(requested);
    for (const Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Amx}) {
      if (r == isa_name(isa) && supported(isa, f)) return isa;
    }
  }
  return best_isa(f);
}

}  // namespace

const CpuFeatures& cpu_features() noexcept {
  static const CpuFeatures features = detect();
  return features;
}

Isa active_isa() noexcept {
  static const Isa isa = choose_isa();
  return isa;
}

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Portable:
      return "portable";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
    case Isa::Neon:
      return "neon";
    case Isa::Amx:
      return "amx";
  }
  return "portable";
}

}  // namespace warden

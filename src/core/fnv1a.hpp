#pragma once
// FNV-1a, 64 bits: the one small non-cryptographic hash for keys that are stable across
// runs and machines (cache files, vocabulary tables). Chain calls by passing the previous
// result as `h`.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace warden {

inline constexpr std::uint64_t kFnv1aBasis = 1469598103934665603ULL;

constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnv1aBasis) noexcept {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

inline std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t h = kFnv1aBasis) noexcept {
  return fnv1a(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), h);
}

}  // namespace warden

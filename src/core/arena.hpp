#pragma once
// One big aligned allocation carved into many buffers: all the packed weights of a model
// live in one region, so it can be backed by huge pages (2 MiB pages waste nothing when
// the region is one block, unlike rounding up each matrix) and is freed in one go.

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>

#include "core/aligned_buffer.hpp"

namespace warden {

class FloatArena {
 public:
  explicit FloatArena(std::size_t floats);

  // `floats` floats, 64-byte aligned, contents undefined. Thread-safe. Throws
  // Error(Internal) when the arena is exhausted (the caller sized it wrong).
  [[nodiscard]] std::span<float> take(std::size_t floats);

  // What take() needs for `floats` floats, alignment included: size arenas by summing these.
  [[nodiscard]] static constexpr std::size_t footprint(std::size_t floats) noexcept {
    return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return buffer_.size(); }

 private:
  static constexpr std::size_t kAlignFloats = 16;  // 64 bytes
  AlignedBuffer<float> buffer_;
  std::atomic<std::size_t> used_{0};
};

}  // namespace warden

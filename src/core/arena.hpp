#pragma once
// One big aligned region carved into many buffers: all the packed weights of a model live
// in one block, so it can be backed by huge pages (2 MiB pages waste nothing when the region
// is one block, unlike rounding up each matrix), freed in one go, saved to disk as one image
// and, on the next start, mapped back from that image instead of packed again.
//
// Buffers are handed out in the order they are taken. An arena made from a saved image is
// *prefilled*: take() hands out the same spans as the arena the image was saved from, given
// the same sequence of requests, and the layers built over them must not write to them (the
// image is mapped read-only).

#include <atomic>
#include <cstddef>
#include <span>
#include <type_traits>
#include <variant>

#include "core/aligned_buffer.hpp"
#include "core/file.hpp"

namespace warden {

class Arena {
 public:
  static constexpr std::size_t kAlignment = 64;

  Arena() = default;
  // `bytes` of fresh memory (contents undefined).
  explicit Arena(std::size_t bytes);
  // A prefilled arena over `bytes` of `image` from `offset` (a multiple of kAlignment);
  // throws Error(Internal) when the image is shorter.
  Arena(MappedFile image, std::size_t offset, std::size_t bytes);
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() = default;

  // `count` values of T, 64-byte aligned, contents undefined (prefilled: as saved).
  // Thread-safe. Throws Error(Internal) when the arena is exhausted (it was sized wrong).
  template <typename T>
  [[nodiscard]] std::span<T> take(std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>, "an arena holds plain numbers");
    return {reinterpret_cast<T*>(take_bytes(count * sizeof(T)).data()), count};
  }
  // The next `bytes` (rounded up as footprint() says) as an arena of their own, prefilled
  // when this one is: gives a part of a model fixed offsets however its parts are loaded.
  [[nodiscard]] Arena child(std::size_t bytes);

  // What take<T>(count) uses up, alignment included: size arenas by summing these.
  template <typename T>
  [[nodiscard]] static constexpr std::size_t footprint(std::size_t count) noexcept {
    return (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
  }

  [[nodiscard]] bool prefilled() const noexcept { return prefilled_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return region_.size(); }
  // The whole region (what is saved as an image).
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return region_; }

 private:
  std::span<std::byte> take_bytes(std::size_t bytes);

  std::variant<std::monostate, AlignedBuffer<std::byte>, MappedFile> owner_;
  std::span<std::byte> region_;
  std::atomic<std::size_t> used_{0};
  bool prefilled_ = false;
};

}  // namespace warden

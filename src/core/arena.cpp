#include "core/arena.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden {

Arena::Arena(std::size_t bytes)
    : owner_(
          AlignedBuffer<std::byte>(footprint<std::byte>(bytes), AlignedBuffer<std::byte>::Uninitialized{})) {
  auto& buffer = std::get<AlignedBuffer<std::byte>>(owner_);
  region_ = buffer.span();
}

Arena::Arena(MappedFile image, std::size_t offset, std::size_t bytes) : prefilled_(true) {
  if (offset % kAlignment != 0 || offset > image.size() || image.size() - offset < bytes) {
    throw Error(ErrorKind::Internal, fmt::format("Arena: an image of {} bytes has no {} bytes at offset {}",
                                                 image.size(), bytes, offset));
  }
  // The mapping is read-only; a prefilled arena's spans are never written (see the header).
  auto* base = const_cast<std::byte*>(image.bytes().data());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  region_ = {base + offset, bytes};
  owner_ = std::move(image);
}

Arena::Arena(Arena&& other) noexcept
    : owner_(std::move(other.owner_)),
      region_(std::exchange(other.region_, {})),
      used_(other.used_.load(std::memory_order_relaxed)),
      prefilled_(other.prefilled_) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    owner_ = std::move(other.owner_);
    region_ = std::exchange(other.region_, {});
    used_.store(other.used_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    prefilled_ = other.prefilled_;
  }
  return *this;
}

std::span<std::byte> Arena::take_bytes(std::size_t bytes) {
  const std::size_t size = footprint<std::byte>(bytes);
  const std::size_t start = used_.fetch_add(size, std::memory_order_relaxed);
  if (start > region_.size() || region_.size() - start < size) {
    throw Error(ErrorKind::Internal, "Arena: out of space");
  }
  // The alignment padding is zeroed, so an image of a filled arena holds no stale bytes.
  if (!prefilled_ && size > bytes) std::memset(region_.data() + start + bytes, 0, size - bytes);
  return region_.subspan(start, bytes);
}

Arena Arena::child(std::size_t bytes) {
  Arena out;
  out.region_ = take_bytes(footprint<std::byte>(bytes));
  out.prefilled_ = prefilled_;
  return out;
}

}  // namespace warden

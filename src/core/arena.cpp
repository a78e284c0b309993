#include "core/arena.hpp"

#include "core/error.hpp"

namespace warden {

FloatArena::FloatArena(std::size_t floats) : buffer_(floats, AlignedBuffer<float>::Uninitialized{}) {}

std::span<float> FloatArena::take(std::size_t floats) {
  const std::size_t size = footprint(floats);
  const std::size_t start = used_.fetch_add(size, std::memory_order_relaxed);
  if (start + size > buffer_.size()) throw Error(ErrorKind::Internal, "FloatArena: out of space");
  return {buffer_.data() + start, floats};
}

}  // namespace warden

#include "core/aligned_buffer.hpp"

#include <sys/mman.h>

namespace warden {

void* allocate_aligned(std::size_t bytes) {
  constexpr std::size_t kLine = 64;
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  // Rounding up to whole huge pages wastes at most 1/8 of the buffer from 16 MiB on.
  const bool huge = bytes >= 8 * kHugePage;
  const std::size_t alignment = huge ? kHugePage : kLine;
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  if (huge) (void)::madvise(p, rounded, MADV_HUGEPAGE);  // advice only
#endif
  return p;
}

}  // namespace warden

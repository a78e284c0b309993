#pragma once
// A fixed-size, 64-byte-aligned array (one cache line, one AVX-512 register) for packed
// weights and workspaces. Move-only; the memory is released by its destructor.

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

namespace warden {

// 64-byte-aligned memory for AlignedBuffer, released with std::free. Buffers of 16 MiB and
// more are aligned to 2 MiB and offered to the kernel as transparent huge pages: packed
// weights are streamed on every forward pass, and huge pages cut both the page faults of
// loading them and the TLB misses of reading them. Throws std::bad_alloc.
void* allocate_aligned(std::size_t bytes);

template <typename T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "AlignedBuffer holds plain numbers");

 public:
  static constexpr std::size_t kAlignment = 64;

  struct Uninitialized {};

  AlignedBuffer() = default;
  // Zero-filled, so that padding lanes of packed panels are well defined.
  explicit AlignedBuffer(std::size_t count) : AlignedBuffer(count, Uninitialized{}) {
    if (count != 0) std::memset(data_.get(), 0, count * sizeof(T));
  }
  // Contents undefined: for buffers the caller fills completely (saves a pass over memory
  // that is about to be written anyway).
  AlignedBuffer(std::size_t count, Uninitialized) : size_(count) {
    if (count == 0) return;
    data_.reset(static_cast<T*>(allocate_aligned(count * sizeof(T))));
  }

  [[nodiscard]] T* data() noexcept { return data_.get(); }
  [[nodiscard]] const T* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<T> span() noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data_.get(), size_}; }
  T& operator[](std::size_t i) noexcept { return data_.get()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace warden

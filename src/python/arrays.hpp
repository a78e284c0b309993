#pragma once
// numpy arrays over buffers that C++ filled, without a copy: the buffer (a std::vector) moves
// into a heap object that a capsule owns, the array's `base` is that capsule, and the buffer
// is freed when the last view of the array goes. live_buffers() counts the buffers alive, so
// that a test can see that an array's memory is the one C++ wrote and that it is freed.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace warden::python {

// A rows x cols float32 array (cols == 0: a 1-D array of `values.size()` floats).
pybind11::array owned_floats(std::vector<float>&& values, std::size_t rows, std::size_t cols);
// A 1-D uint32 array.
pybind11::array owned_ids(std::vector<std::uint32_t>&& values);

// Buffers handed to arrays and not yet freed; the address of the last one handed over.
std::size_t live_buffers() noexcept;
std::uintptr_t last_buffer_address() noexcept;

}  // namespace warden::python

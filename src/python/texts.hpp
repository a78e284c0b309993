#pragma once
// The texts of a Python call, read without copying them: a tuple of the caller's str objects (a
// snapshot, so that another thread changing the caller's list while the GIL is released cannot
// free a text in use) and views of each one's UTF-8 (CPython caches it in the object).

#include <cstddef>
#include <string_view>
#include <vector>

#include <pybind11/pybind11.h>

namespace warden::python {

struct Texts {
  pybind11::tuple owner;                // keeps the str objects alive
  std::vector<std::string_view> views;  // valid while `owner` is
};

// Under the GIL. `items`: any sequence of str. Error(InvalidInput) naming `what` and the index
// for an item that is not a str or cannot be UTF-8 (a lone surrogate).
Texts read_texts(pybind11::handle items, std::string_view what);
// One str as UTF-8, valid while `text` lives; Error(InvalidInput) naming `what` otherwise.
std::string_view read_text(pybind11::handle text, std::string_view what);

}  // namespace warden::python

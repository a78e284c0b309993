#include "python/texts.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace py = pybind11;

namespace warden::python {

namespace {

// The message of the Python error just raised, which is cleared: the caller raises its own.
std::string take_python_error() {
  const py::error_already_set e;
  return e.what();
}

}  // namespace

std::string_view read_text(py::handle text, std::string_view what) {
  if (!PyUnicode_Check(text.ptr())) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} must be a str, not {}", what, Py_TYPE(text.ptr())->tp_name));
  }
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (utf8 == nullptr) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is not valid Unicode text: {}", what, take_python_error()));
  }
  return {utf8, static_cast<std::size_t>(size)};
}

Texts read_texts(py::handle items, std::string_view what) {
  if (PyUnicode_Check(items.ptr()) || PyBytes_Check(items.ptr())) {
    throw Error(ErrorKind::InvalidInput, fmt::format("give a list of {}s, not one string", what));
  }
  PyObject* tuple = PySequence_Tuple(items.ptr());
  if (tuple == nullptr) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{}s must be a sequence of str: {}", what, take_python_error()));
  }
  Texts t{py::reinterpret_steal<py::tuple>(tuple), {}};
  t.views.reserve(t.owner.size());
  for (std::size_t i = 0; i < t.owner.size(); ++i) {
    t.views.push_back(read_text(t.owner[i], fmt::format("{} {}", what, i)));
  }
  return t;
}

}  // namespace warden::python

// The extension module warden._warden: the C++ library's models for python/warden/.

#include <pybind11/pybind11.h>

#include "python/arrays.hpp"
#include "python/batches.hpp"
#include "python/bindings.hpp"
#include "python/errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_warden, m) {
  m.attr("__version__") = WARDEN_VERSION;
  m.doc() = "Warden's C++ models (use the warden package's classes, not these)";
  warden::python::note_main_thread();
  warden::python::register_errors(m);
  warden::python::register_embedder(m);
  warden::python::register_cross_encoder(m);
  warden::python::register_guard(m);
  // For the zero-copy test: buffers alive in arrays, and where the last one handed over lives.
  m.def("_live_buffers", &warden::python::live_buffers);
  m.def("_last_buffer_address", &warden::python::last_buffer_address);
}

#include "python/errors.hpp"

#include <exception>

#include "core/error.hpp"
#include "python/batches.hpp"

namespace py = pybind11;

namespace warden::python {

namespace {

// The class of warden/errors.py for a kind: model files and names are ModelError's, the
// caller's texts InputError's, its options ArgumentError's.
const char* class_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return "ArgumentError";
    case ErrorKind::InvalidInput:
      return "InputError";
    case ErrorKind::NotFound:
      return "ModelNotFoundError";
    case ErrorKind::Unsupported:
      return "UnsupportedError";
    case ErrorKind::CorruptFile:
      return "CorruptModelError";
    case ErrorKind::Io:
      return "WardenIOError";
    case ErrorKind::Internal:
      return "InternalError";
  }
  return "WardenError";
}

}  // namespace

void register_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const Error& e) {
      // Holding the GIL here (pybind11 translates on the calling thread before returning).
      const py::object cls = py::module_::import("warden.errors").attr(class_name(e.kind()));
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
}

}  // namespace warden::python

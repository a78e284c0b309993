#pragma once
// Warden's errors as Python exceptions: each warden::Error becomes the class of python/warden/
// errors.py that names its kind (ModelError, InputError, ...), carrying the C++ message.

#include <pybind11/pybind11.h>

namespace warden::python {

// Installs the translator; the classes are looked up in warden.errors when first needed.
void register_errors(pybind11::module_& m);

}  // namespace warden::python

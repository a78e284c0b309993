#pragma once
// The classes of the extension module warden._warden, one file each; python/warden/ wraps them
// in the documented API (TextEmbedding, TextCrossEncoder, Guard, ...).

#include <pybind11/pybind11.h>

namespace warden::python {

void register_embedder(pybind11::module_& m);       // embedder_binding.cpp
void register_cross_encoder(pybind11::module_& m);  // cross_encoder_binding.cpp
void register_guard(pybind11::module_& m);          // guard_binding.cpp

}  // namespace warden::python

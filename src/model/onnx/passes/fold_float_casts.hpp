#pragma once
// Rewrite pass: Warden computes in float32 whatever precision a graph stores its float values in,
// so a Cast between float types (FLOAT, FLOAT16, BFLOAT16, DOUBLE) of a value that already holds
// floats is the identity here and goes, and a Cast of an integer value to FLOAT16 or BFLOAT16 is
// read as a Cast to FLOAT (what the other passes take). This is what a float16 file needs
// (onnxconverter's convert_float_to_float16, which transformers.js's model_fp16.onnx comes from:
// fp16 initialisers, the mask's Cast(int64 -> FLOAT) followed by a Cast to FLOAT16, the outputs
// cast back to FLOAT): after it the graph reads as its float32 export. Which values hold floats
// is followed forward from the float inputs and constants through the ops that keep their input's
// type; a Cast whose input is not known to hold floats is kept.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of Casts removed or retargeted.
std::size_t fold_float_casts(RewriteGraph& graph);

}  // namespace warden::model::onnx

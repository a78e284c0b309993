#pragma once
// Rewrite pass: ONNX Runtime's BiasGelu(x, b) = Gelu(x + b), which its optimiser writes for a
// dense layer's bias and the erf GELU after it, on a dense layer without a bias
// (warden.Dense(x, W), read only there): the bias goes back into the dense layer and the
// BiasGelu becomes com.microsoft's Gelu — the form the other passes and the encoder read. (Run
// after fuse_dense.)

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of BiasGelus taken apart.
std::size_t fuse_bias_gelu(RewriteGraph& graph);

}  // namespace warden::model::onnx

#pragma once
// Rewrite pass: a residual connection and the LayerNorm after it, LayerNormalization(Add(a, b)),
// with the sum read by nothing else, becomes com.microsoft's SkipLayerNormalization(a, b, gamma,
// beta) — ORT's own fused op, so a graph ORT already optimised reads the same. (Run after the
// embeddings pass, whose sum of Gathers ends in such an Add too.)

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of residual LayerNorms fused.
std::size_t fuse_skip_layer_norm(RewriteGraph& graph);

}  // namespace warden::model::onnx

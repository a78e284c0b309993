#pragma once
// Rewrite pass: the exact (erf) GELU from its decomposition, as torch.onnx.export writes
// F.gelu (every opset before 20) and ORT's GeluFusion matches:
//   y = Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), 0.5)     (or 0.5·x first, or x·(1/√2))
// becomes com.microsoft's Gelu(x) — ORT's own fused op, so a graph ORT already optimised reads
// the same. Intermediate values must be read only inside the pattern.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of GELUs fused.
std::size_t fuse_gelu(RewriteGraph& graph);

}  // namespace warden::model::onnx

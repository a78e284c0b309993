#pragma once
// Rewrite pass: LayerNorm from its decomposition (what torch.onnx.export writes for
// F.layer_norm below opset 17, and ORT's LayerNormFusion matches):
//   m = ReduceMean(x, axes=[-1]); d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes=[-1]);
//   y = Add(Mul(Div(d, Sqrt(Add(v, eps))), gamma), beta)
// becomes LayerNormalization(x, gamma, beta, axis=-1, epsilon=eps). Each intermediate value
// must be read only inside the pattern, gamma and beta must be constant vectors and eps a
// constant scalar; anything else is left as it is (another pass, or the load error, sees it).

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of LayerNorms fused.
std::size_t fuse_layer_norm(RewriteGraph& graph);

}  // namespace warden::model::onnx

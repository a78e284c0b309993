#pragma once
// Rewrite pass: torch.onnx.export writes nn.Linear on a 2-D input (a classification head on the
// first token) as Gemm(x, W, b) with transB = 1 and W as nn.Linear stores it, [out x in]. With
// alpha 1, beta 1, no transA and constant W and b, it becomes warden.Dense(x, W, b) with
// out_in = 1 (transB 0: W is [in x out], as fuse_dense's layers). Anything else is left.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of Gemms made dense layers.
std::size_t fuse_gemm(RewriteGraph& graph);

}  // namespace warden::model::onnx

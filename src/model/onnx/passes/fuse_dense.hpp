#pragma once
// Rewrite pass: a dense layer from a MatMul by a constant [in x out] matrix and the Add of a
// constant [out] bias that only it feeds (what torch.onnx.export writes for nn.Linear on
// 3-D activations: MatMul(x, Wᵀ) then Add(b, ·)), or the MatMul alone. The result is
// warden.Dense(x, W[, b[, W_scale]]) with W as the file stores it, [in x out]: the node Warden's
// engine packs into its GEMM layout (W_scale: int8 W's scale, fuse_quantized_dense.hpp; b may
// then be "", and the Add after such a layer is taken into it here). A MatMul of two activations (attention's
// QKᵀ and PV) is not a dense layer and is left for the attention pass.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of dense layers made.
std::size_t fuse_dense(RewriteGraph& graph);

}  // namespace warden::model::onnx

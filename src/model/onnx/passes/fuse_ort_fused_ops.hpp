#pragma once
// Rewrite passes for the fused ops ONNX Runtime's transformer optimizer writes
// (onnxruntime.transformers.optimizer: optimum's ORTOptimizer, fastembed's *_optimized.onnx),
// read as ORT's contrib op schemas define them:
//   EmbedLayerNormalization(ids, segment_ids, word, position, segment, gamma, beta[, mask])
//     → warden.Embeddings (absolute positions 0..S-1; the segment table added only with segment
//       ids, as ORT does; a position_ids input is left as it is),
//       and its mask_index output → warden.AttentionMask(mask);
//   Attention(x, W_qkv [in x 3H], b_qkv [3H][, mask_index])   (no past, bias or
//     unidirectional; Q, K and V of equal width)
//     → warden.Attention(x, W_qkv, b_qkv[, mask]) with packed_qkv = 1, num_heads and its scale.
// The ids, segment ids and mask may come through a Cast to int32 of the graph's inputs (the
// optimizer adds them). Nodes are rewritten in place (each keeps its outputs and position).

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

std::size_t fuse_ort_embed_layer_norm(RewriteGraph& graph);
std::size_t fuse_ort_attention(RewriteGraph& graph);

}  // namespace warden::model::onnx

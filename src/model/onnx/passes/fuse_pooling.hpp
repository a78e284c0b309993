#pragma once
// Rewrite passes for the pooling and normalisation a SentenceTransformer's export carries in its
// graph (optimum's token_embeddings / sentence_embedding outputs):
//   fuse_mean_pooling: sentence-transformers' mean pooling,
//     m = Cast(Expand(Unsqueeze(attention_mask, -1), shape), float)
//     Div(ReduceSum(Mul(x, m), axes 1), Clip(ReduceSum(m, axes 1), min))
//   → warden.MeanPooling(x, attention_mask), the input a graph input (the engine packs sequences
//   by their lengths, so the mask is what it already knows);
//   fuse_l2_normalize: F.normalize(v, p=2, dim=1),
//     Div(v, Expand(Clip(ReduceL2(v, axes 1, keepdims 1), min eps), Shape(v)))
//   → warden.L2Normalize(v) with `epsilon`.
// What else reads an intermediate value stops the rewrite.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

std::size_t fuse_mean_pooling(RewriteGraph& graph);
std::size_t fuse_l2_normalize(RewriteGraph& graph);

}  // namespace warden::model::onnx

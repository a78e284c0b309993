#pragma once
// Rewrite pass: multi-head self-attention from the ops HF's eager attention exports to
// (BertSelfAttention and its copies in RoBERTa, XLM-R, ...), as ORT's AttentionFusion matches:
//   split(x) = Transpose(Reshape(x, [x.0, x.1, H, D]), [0, 2, 1, 3])      (keys: [0, 2, 3, 1])
//   context = MatMul(Softmax(Add(Div(MatMul(split(q), splitᵀ(k)), √D), mask)), split(v))
//   out = Reshape(Transpose(context, [0, 2, 1, 3]), [c.0, c.1, H·D])
// (the Div may be a Mul by 1/√D, or scale split(q) before QKᵀ as DistilBERT does; the mask may
// be absent, or DistilBERT's Where(Cast(Expand(Reshape(Equal(mask, 0), [b, 1, 1, k]))), -big,
// scores); the Reshape's leading dimensions may be read off the dense layer's input, and the
// merged sequence written -1) becomes
// warden.Attention(q, k, v[, mask]) with num_heads = H and scale = 1/√D as the file has it; the
// mask input is the additive mask (warden.AttentionMask) or the 0/1 attention_mask input.
// The Reshape shapes are read symbolically (shape_values.hpp), so how the exporter spelled the
// shape computation does not matter; each intermediate value must be read only inside.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of attention blocks fused.
std::size_t fuse_attention(RewriteGraph& graph);

}  // namespace warden::model::onnx

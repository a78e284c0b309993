#pragma once
// Rewrite pass: the additive attention mask HF builds from the 0/1 attention_mask input
// (get_extended_attention_mask): (1 - Cast(mask[:, None, None, :], float)) · m, with m a large
// negative constant (finfo(float32).min, or -10000 in older code), written by torch as
// Unsqueeze/Unsqueeze (or one Unsqueeze of axes [1, 2]), Cast, Sub from 1, Mul — becomes
// warden.AttentionMask(attention_mask): the engine packs sequences by their lengths instead.
// The input must be a graph input (the mask the client's tokens come with).

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of masks recognised.
std::size_t fuse_attention_mask(RewriteGraph& graph);

}  // namespace warden::model::onnx

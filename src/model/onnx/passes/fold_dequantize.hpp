#pragma once
// Rewrite pass: DequantizeLinear of a constant — y = (q - zero_point) · scale, per tensor or per
// axis — folded into a float constant (QDQ files' weight-only quantisation, before any other
// pass looks at the weights), and DequantizeLinear of a Gather from a constant table
// (ORT's quantize_dynamic writes the embedding tables as uint8 and dequantises the rows it
// gathers) turned into a Gather from the dequantised table: the same values, which the
// embeddings pass then reads as any float table. Exact: what ONNX Runtime computes.

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of DequantizeLinear nodes folded.
std::size_t fold_dequantize(RewriteGraph& graph);

}  // namespace warden::model::onnx

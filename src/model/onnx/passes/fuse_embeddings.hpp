#pragma once
// Rewrite pass: a BERT-family embedding layer — the sum of Gathers from constant tables (the
// words at input_ids, the positions, the token types) and the LayerNormalization over it —
// becomes warden.Embeddings(input_ids, token_type_ids | "", word, position, type | "", gamma,
// beta) with `epsilon`, `padding_idx` and `zero_types`. The positions must be one of the
// schemes Warden's engine computes, recognised from how the exporters write them:
//   absolute     HF's position_ids buffer Slice(arange(P), 0, seq) (BERT, DistilBERT), or
//                Range(0, seq, 1); padding_idx -1
//   RoBERTa's    create_position_ids_from_input_ids: CumSum(m, 1) · m + p with
//                m = Cast(Not(Equal(input_ids, p))); padding_idx p
// The token types are a graph input, or HF's zero buffer sliced and expanded to the input
// (XLM-R and models exported without token_type_ids): zero_types 1, every token's type is 0.
// Any other position or type computation is left as it is (the load error names it).

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of embedding layers fused.
std::size_t fuse_embeddings(RewriteGraph& graph);

}  // namespace warden::model::onnx

#pragma once
// TEI's /embed_sparse and Warden's /embed_hybrid: their body, parsers and handler.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"
#include "http/app.hpp"
#include "http/body_fields.hpp"
#include "http/embed_routes.hpp"

namespace warden::http {

// POST /embed_sparse (TEI's body: inputs, truncate, truncation_direction, prompt_name) and
// POST /embed_hybrid, which also takes `outputs`: a non-empty list of "dense", "sparse" and
// "multi" (422 for anything else or a repeat); absent: every output the model has. Both take
// the sparse vector's pruning: `top_k` (an integer >= 1: keep that many of the largest weights)
// and `threshold` (a number >= 0: drop the weights below it). `input_type`: "document" (the
// default) or "query" (Cohere's "search_document" / "search_query" too): a ColBERT encodes the
// two differently; the other models ignore it.
struct HybridEmbedRequest {
  EmbedRequest embed;
  std::optional<embed::RetrievalOutputs> outputs;
  std::optional<std::size_t> top_k;
  std::optional<float> threshold;
  bool query = false;
};
HybridEmbedRequest parse_hybrid_embed(std::string_view body);
HybridEmbedRequest parse_sparse_embed(std::string_view body);  // `outputs` is sparse alone

// retrieval_routes.cpp: TEI's /embed_sparse (sparse_only) and /embed_hybrid.
void embed_retrieval(App& app, std::shared_ptr<Call> call, std::string_view body, bool sparse_only);

}  // namespace warden::http

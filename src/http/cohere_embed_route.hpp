#pragma once
// Cohere's /v1/embed and /v2/embed: the body, its parser and the handler.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/app.hpp"
#include "http/body_fields.hpp"
#include "http/embedding_types.hpp"

namespace warden::http {

// Cohere's POST /v1/embed and /v2/embed: {"texts": [str], "model", "input_type",
// "embedding_types": [...], "truncate": "NONE" | "START" | "END", "output_dimension"}. Only
// texts: images and v2's mixed `inputs` are 422. Empty texts are 400 (as /embed refuses them).
struct CohereEmbedRequest {
  std::vector<std::string> texts;
  std::string model;
  std::optional<std::string> input_type;       // search_query, search_document, classification, clustering
  std::vector<EmbeddingType> embedding_types;  // empty: v1's plain list of float vectors
  std::optional<bool> truncate;                // NONE: false; START/END: true; absent: the server's default
  TruncationDirection truncation_direction = TruncationDirection::Right;  // START: Left
  std::optional<std::size_t> output_dimension;                            // >= 1
};
CohereEmbedRequest parse_cohere_embed(std::string_view body);

// cohere_embed_route.cpp: Cohere's /v1/embed and /v2/embed (embedding types: float, int8,
// uint8, binary, ubinary, base64).
void cohere_embed(App& app, std::shared_ptr<Call> call, std::string_view body, int version);

}  // namespace warden::http

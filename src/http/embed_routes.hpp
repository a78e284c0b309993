#pragma once
// TEI's /embed, /embed_all and /similarity, OpenAI's /v1/embeddings: their bodies, parsers and
// handlers (embed_routes.cpp).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

// TEI POST /embed and /embed_all (embed_all ignores normalize/dimensions).
struct EmbedRequest {
  // `inputs`: "text" | [ids...] (one sequence) | ["a","b"] | [[ids],[ids]] | mixed ["a",[ids]].
  // Empty strings are accepted here (TEI refuses them later, when tokenizing: the router's call).
  std::vector<Input> inputs;
  bool normalize = true;
  std::optional<bool> truncate;  // absent: the server's --auto-truncate decides
  TruncationDirection truncation_direction = TruncationDirection::Right;
  std::optional<std::string> prompt_name;
  // `task` (jina's API: a task adapter with its instruction) names a prompt as prompt_name does;
  // prompt_field says which of the two named it.
  std::string prompt_field = "prompt_name";
  std::optional<std::size_t> dimensions;  // >= 1 (422 otherwise); upper bound checked by the router
  std::string model;                      // empty when absent
};
EmbedRequest parse_tei_embed(std::string_view body);

// OpenAI POST /v1/embeddings.
struct OpenAiEmbedRequest {
  // `input`: "text" | ["a","b"] | [ids] | [[ids],...] (and TEI's mixed lists). Empty strings are
  // 422 with param "input" and the index in the message, as OpenAI rejects them.
  std::vector<Input> input;
  std::string model;                      // empty when absent
  bool base64 = false;                    // encoding_format "float" (default) | "base64"; anything else 422
  std::optional<std::size_t> dimensions;  // >= 1
  std::string user;                       // accepted, unused
  // Beyond OpenAI's fields, as TEI, jina and the OpenAI-style embedding servers take them:
  // `prompt_name` or `task` (a prompt by name, a task adapter with it; both must agree), or
  // `input_type` (query, passage, document, or Cohere's names: a prompt by purpose, as Cohere's
  // route) instead.
  std::optional<std::string> prompt_name;
  std::string prompt_field = "prompt_name";
  std::optional<std::string> input_type;
};
OpenAiEmbedRequest parse_openai_embed(std::string_view body);

// TEI POST /similarity: {"inputs": {"source_sentence": str, "sentences": [str,...]}, ...}.
// truncate / truncation_direction / prompt_name are read at the top level and, as TEI sends
// them, from a "parameters" object, which wins when both are given.
struct SimilarityRequest {
  std::string source_sentence;
  std::vector<std::string> sentences;
  std::optional<bool> truncate;
  TruncationDirection truncation_direction = TruncationDirection::Right;
  std::optional<std::string> prompt_name;
  std::string model;  // empty when absent
};
SimilarityRequest parse_similarity(std::string_view body);

// TEI's embed fields, which /embed_sparse and /embed_hybrid share.
EmbedRequest tei_embed_fields(body::object obj);

// embed_routes.cpp: TEI's /embed (all: /embed_all) and /similarity, OpenAI's /v1/embeddings.
void embed(App& app, std::shared_ptr<Call> call, std::string_view body, bool all);
void similarity(App& app, std::shared_ptr<Call> call, std::string_view body);
void openai_embed(App& app, std::shared_ptr<Call> call, std::string_view body);

}  // namespace warden::http

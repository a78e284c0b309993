#pragma once
// Request bodies of the embedding routes, parsed with simdjson at a bounded depth. Unknown
// fields are ignored (as TEI and OpenAI do); wrong types, invalid JSON and invalid UTF-8
// throw ApiError(422), an empty input list ApiError(400).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::http {

// Deeper documents are refused: no legitimate body nests further, and a bound keeps a
// hostile one from costing memory.
inline constexpr std::size_t kMaxJsonDepth = 32;

// TEI POST /embed.
struct TeiEmbedRequest {
  std::vector<std::string> inputs;
  bool normalize = true;
  bool truncate = false;  // accepted; the embedders truncate to their own limit anyway
};
TeiEmbedRequest parse_tei_embed(std::string_view body);

// OpenAI POST /v1/embeddings.
struct OpenAiEmbedRequest {
  std::vector<std::string> input;
  std::string model;
  bool base64 = false;  // encoding_format: "float" (default) or "base64"
};
OpenAiEmbedRequest parse_openai_embed(std::string_view body);

}  // namespace warden::http

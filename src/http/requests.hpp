#pragma once
// Request bodies of every POST route, parsed with simdjson's DOM at a bounded depth.
//
// Shared rules (all parsers):
// * invalid JSON, invalid UTF-8, nesting deeper than kMaxJsonDepth, a body that is not an
//   object, a missing required field and a field of the wrong type throw
//   ApiError(422, "Validation"); the message names the field (and the index of a list item,
//   e.g. "`inputs[2][0]`") and ApiError::param() is the top-level field name;
// * an empty input list throws ApiError(400, "Empty");
// * unknown fields are ignored and a JSON null counts as an absent field (TEI and OpenAI
//   clients send both);
// * every body may name the model that answers it in `model` (empty when absent: the
//   route's default model); a path prefix /models/{name}/ wins over it;
// * token ids are JSON integers from 0 to 2^32-1 (not 1.0, not true); an empty id list is 422.
// Limits that depend on the server (batch size, --auto-truncate, `dimensions` against the
// model's dimension) are the router's to check.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"
#include "embed/retrieval_scores.hpp"
#include "http/embedding_types.hpp"
#include "serving/tasks/inputs.hpp"

namespace warden::http {

// Deeper documents are refused: no legitimate body nests further, and a bound keeps a
// hostile one from costing memory.
inline constexpr std::size_t kMaxJsonDepth = 32;

// One input: a text, or token ids the client tokenized itself (TEI and OpenAI accept both).
using Input = serving::tasks::Input;

enum class TruncationDirection { Right, Left };  // TEI's "Right" / "Left" (accepted in any case)

// A request's truncation (and prompt by name) as a task states them (serving/tasks/inputs.hpp).
serving::tasks::Tokenization tokenization(std::optional<bool> truncate, TruncationDirection direction,
                                          std::optional<std::string> prompt_name = std::nullopt);

// TEI POST /embed and /embed_all (embed_all ignores normalize/dimensions).
struct EmbedRequest {
  // `inputs`: "text" | [ids...] (one sequence) | ["a","b"] | [[ids],[ids]] | mixed ["a",[ids]].
  // Empty strings are accepted here (TEI refuses them later, when tokenizing: the router's call).
  std::vector<Input> inputs;
  bool normalize = true;
  std::optional<bool> truncate;  // absent: the server's --auto-truncate decides
  TruncationDirection truncation_direction = TruncationDirection::Right;
  std::optional<std::string> prompt_name;
  std::optional<std::size_t> dimensions;  // >= 1 (422 otherwise); upper bound checked by the router
  std::string model;                      // empty when absent
};
EmbedRequest parse_tei_embed(std::string_view body);

// POST /embed_sparse (TEI's body: inputs, truncate, truncation_direction, prompt_name) and
// POST /embed_hybrid, which also takes `outputs`: a non-empty list of "dense", "sparse" and
// "multi" (422 for anything else or a repeat); absent: every output the model has. Both take
// the sparse vector's pruning: `top_k` (an integer >= 1: keep that many of the largest weights)
// and `threshold` (a number >= 0: drop the weights below it). `input_type`: "document" (the
// default) or "query" (Cohere's "search_document" / "search_query" too): a ColBERT encodes the
// two differently; the other models ignore it.
struct HybridEmbedRequest {
  EmbedRequest embed;
  std::optional<RetrievalOutputs> outputs;
  std::optional<std::size_t> top_k;
  std::optional<float> threshold;
  bool query = false;
};
HybridEmbedRequest parse_hybrid_embed(std::string_view body);
HybridEmbedRequest parse_sparse_embed(std::string_view body);  // `outputs` is sparse alone

// OpenAI POST /v1/embeddings.
struct OpenAiEmbedRequest {
  // `input`: "text" | ["a","b"] | [ids] | [[ids],...] (and TEI's mixed lists). Empty strings are
  // 422 with param "input" and the index in the message, as OpenAI rejects them.
  std::vector<Input> input;
  std::string model;                      // empty when absent
  bool base64 = false;                    // encoding_format "float" (default) | "base64"; anything else 422
  std::optional<std::size_t> dimensions;  // >= 1
  std::string user;                       // accepted, unused
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

// TEI POST /tokenize: {"inputs": str | [str], "add_special_tokens": true, "prompt_name"}.
struct TokenizeRequest {
  std::vector<std::string> inputs;
  bool single = false;  // `inputs` was one string: the response is still a list of lists (TEI)
  bool add_special_tokens = true;
  std::optional<std::string> prompt_name;
  std::string model;  // empty when absent
};
TokenizeRequest parse_tokenize(std::string_view body);

// Warden's POST /guard: {"inputs": str | [str], "model"?: str}.
struct GuardRequest {
  std::vector<std::string> inputs;
  bool single = false;  // `inputs` was one string (the answer is a list either way)
  std::string model;    // ignored: /guard decides with the guard's own model
};
GuardRequest parse_guard(std::string_view body);

// LiteLLM's Generic Guardrail API (POST /beta/litellm_basic_guardrail_api): {"texts": [str]
// (may be empty), "images"?, "tools"?, "structured_messages"?, "request_data"?, "input_type":
// "request"|"response", "litellm_call_id"?, "litellm_trace_id"?,
// "additional_provider_specific_params"?: {"block_on_abstain"?: bool}}. Only the texts are
// judged; the other fields are read for their type and otherwise ignored.
struct GuardrailRequest {
  std::vector<std::string> texts;
  std::string input_type = "request";
  bool block_on_abstain = false;  // fail closed on texts the guard cannot judge
};
GuardrailRequest parse_litellm_guardrail(std::string_view body);

// TEI POST /decode: {"ids": [ids] | [[ids],...], "skip_special_tokens": true}.
struct DecodeRequest {
  std::vector<std::vector<std::uint32_t>> ids;
  bool single = false;  // `ids` was one flat list
  bool skip_special_tokens = true;
  std::string model;  // empty when absent
};
DecodeRequest parse_decode(std::string_view body);

// TEI POST /rerank: {"query": str, "texts": [str], "raw_scores", "return_text", "truncate",
// "truncation_direction"}. An empty `query` is 422; empty `texts` 400.
struct RerankRequest {
  std::string query;
  std::vector<std::string> texts;
  bool raw_scores = false;
  bool return_text = false;
  std::optional<bool> truncate;
  TruncationDirection truncation_direction = TruncationDirection::Right;
  std::string model;  // empty when absent
  // `retrieval_weights`: [dense, sparse, multi], numbers >= 0 with a positive sum: how a model
  // with several retrieval outputs (bge-m3) weighs their scores (422 otherwise).
  std::optional<RetrievalWeights> retrieval_weights;
  // A yes/no reranker's task instruction (Qwen3-Reranker's <Instruct>); empty: the model card's
  // default. Other rerankers take none (422).
  std::string instruction;
  // Warden's `guard`: judge the returned texts with the prompt-injection guard too (each
  // result then carries its verdict): retrieved passages checked before they reach the LLM.
  bool guard = false;
};
RerankRequest parse_tei_rerank(std::string_view body);

// The documents-style rerank dialects: Cohere's POST /v1/rerank and /v2/rerank, Jina's and
// vLLM's /v1/rerank, llama.cpp's /v1/reranking: {"model", "query", "documents" (or "input"):
// [str | {"text": str}], "top_n" (or "top_k"), "return_documents": false}. top_n must be
// >= 1; an empty `query` is 422; documents come back only when asked, as Cohere does.
struct DocumentsRerankRequest {
  std::string model;
  std::string query;
  std::vector<std::string> documents;
  std::string documents_field = "documents";  // the field they came in (errors name it)
  std::optional<std::size_t> top_n;
  bool return_documents = false;
  // Mixedbread's return_input: each item of the list as it was sent (minified JSON), to
  // echo as `data[i].input`; filled only when asked for.
  bool return_input = false;
  std::vector<std::string> inputs_as_sent;
  std::optional<RetrievalWeights> retrieval_weights;  // as RerankRequest's
  std::string instruction;                            // as RerankRequest's
  bool guard = false;                                 // as RerankRequest's: the top_n are judged
};
DocumentsRerankRequest parse_documents_rerank(std::string_view body);

// TEI POST /predict. `inputs` follows TEI's rule: the first list element decides.
//   "a"                    one text                       single = true
//   ["a"]                  one text                       single = true
//   ["a","b"]              ONE pair (text, text_pair)     single = true
//   ["a","b","c"]          422 (a sequence is a text or a pair)
//   [["a"],["b","c"],...]  a batch of texts and pairs     single = false
struct PredictInput {
  std::string text;
  std::optional<std::string> text_pair;
};
struct PredictRequest {
  std::vector<PredictInput> inputs;
  bool single = false;  // the response is one list of predictions, not a list of lists
  bool raw_scores = false;
  std::optional<bool> truncate;
  TruncationDirection truncation_direction = TruncationDirection::Right;
  std::string model;  // empty when absent
};
PredictRequest parse_predict(std::string_view body);

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

// TEI's POST / and /invocations: what picks the route (embed, rerank or predict) before the
// body is parsed again by that route's own parser.
struct RootRequest {
  std::string model;       // empty when absent
  bool has_query = false;  // a rerank request ({"query", "texts"}) rather than /predict's
  bool similarity =
      false;  // {"inputs": {"source_sentence", "sentences"}}: /similarity's (HF's sentence-similarity)
};
RootRequest parse_root(std::string_view body);

// Warden's POST /admin/models: {"model": source, "name"?: alias}. The source is what
// --model takes (a built-in name, a folder, an HF id ORG/NAME[@REV]); the name defaults to
// the one --model would give it. Names are 1-200 bytes without control characters.
struct AdminModelRequest {
  std::string source;
  std::string name;   // empty: derived from the source
  std::string dtype;  // empty: the server's --dtype; else float32|bfloat16|int8|auto (checked)
};
AdminModelRequest parse_admin_model(std::string_view body);

}  // namespace warden::http

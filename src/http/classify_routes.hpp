#pragma once
// TEI's /predict and /rerank, the documents-style rerank dialects: bodies, parsers, handlers.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embed/retrieval_scores.hpp"
#include "guard/guard.hpp"
#include "http/app.hpp"
#include "http/body_fields.hpp"

namespace warden::http {

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
  std::optional<embed::RetrievalWeights> retrieval_weights;
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
  std::optional<embed::RetrievalWeights> retrieval_weights;  // as RerankRequest's
  std::string instruction;                                   // as RerankRequest's
  bool guard = false;                                        // as RerankRequest's: the top_n are judged
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

// classify_routes.cpp: TEI's /predict and /rerank; the documents-style rerank dialects (Cohere
// v1/v2, Jina, vLLM, llama.cpp: /v1/rerank, /v2/rerank, /v1/reranking), `version` the Cohere
// API version the answer's meta names.
void predict(App& app, std::shared_ptr<Call> call, std::string_view body);
void rerank(App& app, std::shared_ptr<Call> call, std::string_view body);
void documents_rerank(App& app, std::shared_ptr<Call> call, std::string_view body, int version);
// A rerank's verdicts, by text index: set for the texts the answer returns when the request
// asked for `guard`.
using PassageVerdicts = std::vector<std::optional<guard::GuardResult>>;
// Answers a rerank: `answer(nullptr)` at once, or, with `guard`, after the guard has judged
// the texts the answer returns (`returned`, indices into `texts`): `answer(&verdicts)`.
void answer_rerank(App& app, const std::shared_ptr<Call>& call, bool guard, std::vector<std::size_t> returned,
                   const std::shared_ptr<const std::vector<std::string>>& texts, std::string param,
                   std::function<Response(const PassageVerdicts*)> answer);

}  // namespace warden::http

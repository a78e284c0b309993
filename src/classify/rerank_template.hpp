#pragma once
// How a causal LM used as a reranker (Qwen3-Reranker, mxbai-rerank-v2, bge-reranker-v2-gemma)
// turns a query and a document into one prompt, and which logits at the prompt's last position
// make its score. Each model's own code builds its prompt differently — one text with the pair
// inside, or the query and document tokenized apart, cut to their own budgets and joined between
// fixed pieces — so a template says which of the two layouts it uses, its pieces, its budgets
// and its score tokens. The named templates are those models' code, string for string; any other
// model takes a JSON file of the same fields (docs/model-files.md lists them).

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace warden::classify {

struct RerankTemplate {
  std::string name = {};  // the preset's name, or the file it was read from

  enum class Layout {
    // One text, `body` with {instruction}, {query} and {document} filled in, tokenized as any
    // input and cut longest_first to what the fixed pieces leave (Qwen3-Reranker's card).
    Joint,
    // The query (`query`, or `query_with_instruction` when an instruction is given) and the
    // document (`document`) tokenized apart without special tokens and cut to their budgets,
    // then joined by `separator` (mxbai-rerank-v2, FlagEmbedding's LLM rerankers).
    Pair,
  };
  Layout layout = Layout::Joint;

  // The fixed pieces, each tokenized on its own without special tokens; `prefix` goes first,
  // the `suffix` pieces last, in order.
  std::string prefix = {};
  std::vector<std::string> suffix = {};
  bool bos = false;  // the tokenizer's bos token before everything (FlagEmbedding's rerankers)

  std::string body = {};                    // Joint
  std::string query = {};                   // Pair: "{query}" filled in
  std::string query_with_instruction = {};  // Pair: with an instruction; empty: `query` only
  std::string separator = {};               // Pair: between query and document
  std::string document = {};                // Pair: "{document}" filled in
  // The instruction when a request gives none; empty: none ({instruction} is then empty, and a
  // Pair template uses `query`).
  std::string default_instruction = {};

  // Pair budgets, as the model's code cuts: the body's tokens are at most `max_length` (less
  // when the model's limit less the fixed pieces is smaller), the query's at most 3/4 of that,
  // and query + separator + document at most that — plus the suffix's tokens when
  // `pair_budget_adds_suffix` (FlagEmbedding counts them into its encode_max_length).
  std::size_t max_length = 0;  // 0: the model's limit
  bool pair_budget_adds_suffix = false;

  // The score: the logit of score_tokens[0] at the last position, less that of score_tokens[1]
  // when there are two (softmax over the pair = sigmoid of the difference). `token_ids_by_text`:
  // the first id of the token's text tokenized without special tokens, as mxbai and FlagEmbedding
  // look it up; otherwise the vocabulary's entry (convert_tokens_to_ids, Qwen3's card).
  std::vector<std::string> score_tokens = {};
  bool token_ids_by_text = false;
};

// The built-in templates' names, for help and errors.
std::vector<std::string_view> rerank_template_names();

// `spec` is a built-in name (qwen3-reranker, mxbai-rerank-v2, bge-reranker-v2-gemma) or the path
// of a JSON file with the fields above. Error(InvalidArgument) for an unknown name; for a file,
// Error(NotFound) when missing and Error(CorruptFile) naming the key when malformed (an unknown
// key, a wrong type, a body or document without its placeholder, no or more than two score
// tokens).
RerankTemplate rerank_template(std::string_view spec);
// A template file's text, named `source` in errors (what rerank_template reads from a file).
RerankTemplate parse_rerank_template(std::string_view text, std::string_view source);

}  // namespace warden::classify

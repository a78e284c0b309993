#pragma once
// What a request's inputs and results go through on their way in and out, whatever the
// transport (HTTP, gRPC): the request's tokenization options, Matryoshka truncation and
// normalisation of pooled rows, the scores of a classifier's logits and their order, and the
// tokens as TEI's /tokenize shows them. Rule violations throw Error(InvalidArgument); each
// transport maps that in its one error map.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"

namespace warden::serving {

// A request's tokenization options: truncation and the prompt by name (absent: the model's
// default prompt, if it has one). The prompt must be one of the model's.
embed::InputOptions input_options(const embed::Embedder& e, bool truncate, embed::TruncationSide side,
                                  const std::optional<std::string>& prompt_name);
// The model's task adapter of that name (Embedder::tasks(), a view of the embedder's own string),
// or empty: a prompt named like a task selects the task's adapter too.
std::string_view task_named(const embed::Embedder& e, const std::string& prompt_name);

// The prompt names that mean an input_type (Cohere's, and the OpenAI-style servers' "query" /
// "passage" / "document"), first found first: the type itself, then sentence-transformers' usual
// names (query; document, passage, corpus) and jina-embeddings-v3's tasks (retrieval.query,
// retrieval.passage, separation for clustering).
std::vector<std::string> input_type_purposes(const std::string& input_type);
// The prompt of the first of `purposes` the model has one for, and the task adapter of that
// name, into `o`; `o` unchanged when the model has none of them.
void apply_purposes(const embed::Embedder& e, std::span<const std::string> purposes, embed::InputOptions& o);

// Matryoshka truncation then (optionally) normalisation, per row: the order
// sentence-transformers uses (truncate_dim, then normalize). Rows that are unit vectors
// already (unit = the embedder says so) are left bit-exact unless truncated.
Embeddings finish_rows(Embeddings rows, std::optional<std::size_t> dimensions, bool normalize, bool unit);

// A sparse vector pruned as a request asks: the weights below `threshold` dropped, then the
// `top_k` largest kept (ties: the lower id); ids stay ascending. Absent: no such pruning.
SparseVector prune_sparse(SparseVector v, std::optional<std::size_t> top_k, std::optional<float> threshold);

// Unless `dimensions` is absent or between 1 and the model's `dim`; `field` names it.
void check_dimensions(std::optional<std::size_t> dimensions, std::size_t dim, std::string_view field);

// A classifier's scores for one input, as TEI gives them: the logits themselves when raw,
// else the sigmoid of a lone logit or the softmax of several.
std::vector<float> class_scores(std::span<const float> logits, bool raw);

// Indices 0..n-1 by score, highest first; ties keep the input order.
std::vector<std::size_t> by_score(std::span<const float> scores);

// The tokens of a text as TEI's /tokenize shows them: a normal token as the slice of the
// input it covers ("hello", not "##llo" or "▁hello"), a special token as its vocabulary
// string; offsets into the prompt + the text.
std::vector<embed::TokenInfo> tei_tokens(const embed::Embedder& e, const std::string& text,
                                         const embed::InputOptions& options);

}  // namespace warden::serving

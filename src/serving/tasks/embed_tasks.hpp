#pragma once
// The embedding tasks: what a request asks of an embedder, as every transport states it.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "embed/embedder.hpp"
#include "serving/tasks/inputs.hpp"

namespace warden::serving::tasks {

// Pooled vectors (TEI's /embed, OpenAI's /v1/embeddings, Cohere's /embed, gRPC's Embed), cut
// to `dimensions` (Matryoshka) and normalised as asked.
struct Embed {
  std::vector<Input> inputs;
  Field field;
  Tokenization tokenization;
  // A prompt by purpose: the first of these names the model has a prompt for (Cohere's
  // input_type); none: tokenization.prompt_name, else the model's default.
  std::vector<std::string> purposes;
  std::optional<std::size_t> dimensions;
  std::string dimensions_field = "dimensions";
  bool normalize = true;
  bool refuse_empty = true;  // TEI's rule (refuse_empty); Cohere embeds an empty text
  std::size_t copies = 1;    // forms of each vector the answer holds (Cohere's types), for its size limit
};

// Per-token vectors (TEI's /embed_all, gRPC's EmbedAll).
struct EmbedTokens {
  std::vector<Input> inputs;
  Field field;
  Tokenization tokenization;
};

// Cosine similarity of a source sentence with each of `sentences` (TEI's /similarity).
struct Similarity {
  std::string source;
  std::vector<std::string> sentences;
  Tokenization tokenization;
};

// Any subset of an embedder's dense, sparse and multi-vector outputs from one forward pass
// (TEI's /embed_sparse, Warden's /embed_hybrid, gRPC's EmbedSparse). Every output the model
// has is computed, so that all subsets share one result cache entry.
struct EmbedRetrieval {
  std::vector<Input> inputs;
  Field field;
  Tokenization tokenization;
  std::optional<embed::RetrievalOutputs> outputs;  // absent: every output the model has
  std::optional<std::size_t> dimensions;           // the dense vector's, as Embed's
  bool normalize = true;
  std::optional<std::size_t> top_k;  // the sparse vector's pruning (prune_sparse)
  std::optional<float> threshold;
  bool query = false;  // a ColBERT encodes queries and documents differently
};

// What EmbedRetrieval gives: the outputs asked for, each input's vectors with only those
// filled in — dense finished as Embed's, sparse pruned.
struct Retrieved {
  embed::RetrievalOutputs outputs;
  std::vector<embed::RetrievalVectors> vectors;
};

}  // namespace warden::serving::tasks

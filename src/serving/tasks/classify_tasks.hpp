#pragma once
// The scoring tasks: what a request asks of a classifier or a reranker, as every transport
// states it.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "embed/retrieval_scores.hpp"
#include "serving/tasks/inputs.hpp"

namespace warden::serving::tasks {

// A classifier's scores for texts or text pairs (TEI's /predict, gRPC's Predict).
struct Classify {
  struct Text {
    std::string text;
    std::optional<std::string> pair;
  };
  std::vector<Text> inputs;
  Field field;
  Tokenization tokenization;  // truncation only: classifiers take no prompts
  bool raw_scores = false;    // the logits as they are; else the sigmoid of one, the softmax of several
};

// Scores per input, in the model's label order; `labels` lives as long as the lease.
struct Classified {
  std::vector<std::vector<float>> scores;
  const std::vector<std::string>* labels = nullptr;
};

// The relevance of texts to a query (TEI's /rerank, the documents dialects, gRPC's Rerank):
// by a cross-encoder (one logit per pair), or by an embedder's token vectors (a ColBERT,
// bge-m3: serving/vector_rerank.hpp), whichever the model is.
struct Rerank {
  std::vector<std::string> queries;  // one for every text, or one per text (gRPC's RerankStream)
  std::vector<std::string> texts;
  std::string texts_field = "texts";
  Tokenization tokenization;  // truncation only
  // A yes/no reranker's prompt (Qwen3-Reranker); any other model refuses one (Invalid).
  std::string instruction;
  // A cross-encoder's logit as it is; else its sigmoid. Vector similarities are always as they are.
  bool raw_scores = false;
  std::optional<embed::RetrievalWeights> weights;  // vector reranking's [dense, sparse, multi]
  [[nodiscard]] const std::string& query(std::size_t i) const {
    return queries.size() == 1 ? queries[0] : queries[i];
  }
};

}  // namespace warden::serving::tasks

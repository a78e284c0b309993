#pragma once
// Reranking by an embedding model's token vectors (a ColBERT, bge-m3), the rule both
// transports share: the query is encoded as a query and each text as a document (one retrieval
// job), then each text is scored as the model's own library scores it — a ColBERT alone by
// MaxSim (PyLate), a model with more outputs by FlagEmbedding's weighted sum of its dense,
// sparse and ColBERT scores (embed/retrieval_scores.hpp).

#include <optional>

#include "embed/embedder.hpp"
#include "embed/retrieval_scores.hpp"

namespace warden::serving {

struct LoadedModel;

// Whether the model reranks by its token vectors rather than as a cross-encoder: an embedder
// with a multi-vector output.
[[nodiscard]] bool reranks_by_vectors(const LoadedModel& model) noexcept;

class VectorRerank {
 public:
  // `weights`: [dense, sparse, multi] as a request gives them; absent, 1 for each output the
  // model has. Error(Unsupported) naming what the model gives when it has no multi-vector
  // output or a weight falls on an output it lacks.
  VectorRerank(const embed::Embedder& embedder, std::string_view model_name,
               std::optional<embed::RetrievalWeights> weights);
  // The relevance of a document's outputs to a query's.
  [[nodiscard]] float score(const embed::RetrievalVectors& query,
                            const embed::RetrievalVectors& document) const;

 private:
  embed::RetrievalWeights weights_;
  bool maxsim_ = false;  // a ColBERT without weights: PyLate's MaxSim, not normalised
};

}  // namespace warden::serving

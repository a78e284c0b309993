#include "serving/vector_rerank.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/model_manager.hpp"

namespace warden::serving {

bool reranks_by_vectors(const LoadedModel& model) noexcept {
  return model.embedder != nullptr && model.embedder->retrieval_outputs().multi;
}

VectorRerank::VectorRerank(const embed::Embedder& embedder, std::string_view model_name,
                           std::optional<embed::RetrievalWeights> weights) {
  const embed::RetrievalOutputs has = embedder.retrieval_outputs();
  const std::string gives = fmt::format("{}{}{}", has.dense ? " dense" : "", has.sparse ? " sparse" : "",
                                        has.multi ? " multi" : "");
  if (!has.multi) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("model {} has no token vectors to rerank by: it gives{}", model_name, gives));
  }
  if (weights && ((weights->dense > 0 && !has.dense) || (weights->sparse > 0 && !has.sparse))) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("model {} cannot weigh an output it does not give: it gives{}", model_name, gives));
  }
  maxsim_ = !weights && !has.dense && !has.sparse;
  weights_ =
      weights.value_or(embed::RetrievalWeights{has.dense ? 1.0F : 0.0F, has.sparse ? 1.0F : 0.0F, 1.0F});
}

float VectorRerank::score(const embed::RetrievalVectors& query,
                          const embed::RetrievalVectors& document) const {
  return maxsim_ ? embed::max_sim(query.multi, document.multi) : weighted_score(query, document, weights_);
}

}  // namespace warden::serving

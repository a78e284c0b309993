#pragma once
// What a model does, known from its config before it is loaded: the model layer reads it,
// the catalog and the serving layer route by it.

#include <string_view>

namespace warden {

enum class ModelKind {
  Embedding,   // no head: pooled hidden states
  Reranker,    // *ForSequenceClassification with one label
  Classifier,  // *ForSequenceClassification with several labels
};

// "embedding", "reranker", "classifier".
constexpr std::string_view model_kind_name(ModelKind kind) noexcept {
  switch (kind) {
    case ModelKind::Embedding:
      return "embedding";
    case ModelKind::Reranker:
      return "reranker";
    case ModelKind::Classifier:
      return "classifier";
  }
  return "embedding";
}

}  // namespace warden

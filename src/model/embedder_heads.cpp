#include "model/embedder_heads.hpp"

#include "core/error.hpp"
#include "model/encoder_model.hpp"
#include "model/heads/pooled_head.hpp"
#include "model/heads/sparse_heads.hpp"
#include "model/heads/token_vector_heads.hpp"

namespace warden::model {

Heads embedder_heads(const EncoderModel& model, HeadVocabulary vocabulary) {
  Heads heads;
  const std::size_t hidden = model.encoder.dims().hidden;
  // A SPLADE model's sentence embedding is its sparse vector, a ColBERT's its token vectors:
  // neither has a pooled one.
  if (model.splade) {
    heads.push_back(std::make_unique<heads::SpladeWeightsHead>(*model.splade));
    return heads;
  }
  if (model.colbert) {
    if (!model.multi_vector)
      throw Error(ErrorKind::Internal, "a ColBERT model was loaded without its projection");
    heads.push_back(
        std::make_unique<heads::ColbertHead>(*model.multi_vector, std::move(vocabulary.colbert_skiplist)));
    return heads;
  }
  heads.push_back(std::make_unique<heads::PooledHead>(model.pooling, hidden, model.pooled_dense));
  if (model.lexical) {
    heads.push_back(std::make_unique<heads::LexicalWeightsHead>(
        *model.lexical, std::move(vocabulary.sparse_skip_ids), model.encoder.dims().vocab));
  }
  if (model.multi_vector) heads.push_back(std::make_unique<heads::TokenVectorsHead>(*model.multi_vector));
  return heads;
}

const heads::Head* find_head(const Heads& heads, heads::HeadOutput output) noexcept {
  for (const auto& head : heads) {
    if (head->output() == output) return head.get();
  }
  return nullptr;
}

}  // namespace warden::model

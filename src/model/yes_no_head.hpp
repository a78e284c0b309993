#pragma once
// A causal LM used as a reranker (Qwen3-Reranker): the model card scores a pair by the LM head's
// logits of the "yes" and "no" tokens at the prompt's last position,
//   score = softmax([logit_no, logit_yes])[1] = sigmoid(logit_yes - logit_no),
// so only those two rows of the LM head matter, and their difference is one row: the head keeps
// w_yes - w_no (in float32, from lm_head.weight, or from the word embeddings when the LM head is
// tied to them) on the last token of each sequence, and the reranker's sigmoid turns its logit
// into the model card's score.

#include <cstdint>

#include "core/cpu_features.hpp"
#include "model/encoder_model.hpp"
#include "model/heads/classifier_head.hpp"

namespace warden::model {

// The head of `model` (a yes/no reranker's: EncoderModel::scores_with_lm_head) for the token
// ids the folder's tokenizer gives "yes" and "no". Error(CorruptFile) naming the tensor when the
// checkpoint holds neither an LM head nor the word embeddings, or an id is outside them.
heads::ClassifierHead yes_no_head(const EncoderModel& model, std::uint32_t yes, std::uint32_t no, Isa isa);

}  // namespace warden::model

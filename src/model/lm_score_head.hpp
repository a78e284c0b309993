#pragma once
// A causal LM used as a reranker (Qwen3-Reranker, mxbai-rerank-v2, bge-reranker-v2-gemma)
// scores a pair by its LM head's logits at the prompt's last position: one token's logit
// (bge-reranker-v2-gemma's "Yes"), or one token's less another's (Qwen3's "yes" against "no":
// softmax([logit_no, logit_yes])[1] = sigmoid(logit_yes - logit_no); mxbai's "1" against "0").
// Either is one row of the LM head — w_a, or w_a - w_b — so the head keeps that row (in float32,
// from lm_head.weight, or from the word embeddings when the LM head is tied to them) on the last
// token of each sequence, and the reranker's sigmoid turns its logit into a score.

#include <cstdint>
#include <optional>

#include "core/cpu_features.hpp"
#include "model/encoder_model.hpp"
#include "model/heads/classifier_head.hpp"

namespace warden::model {

// The head of `model` (an LLM reranker's: EncoderModel::scores_with_lm_head) scoring the logit
// of token `positive`, less that of `negative` when given. Error(CorruptFile) naming the tensor
// when the checkpoint holds neither an LM head nor the word embeddings, or an id is outside them.
heads::ClassifierHead lm_score_head(const EncoderModel& model, std::uint32_t positive,
                                    std::optional<std::uint32_t> negative, Isa isa);

}  // namespace warden::model

#include "classify/sequence_classifier.hpp"

#include <cmath>

#include <fmt/format.h>

#include "classify/rerank_prompt.hpp"
#include "core/error.hpp"
#include "embed/text_input.hpp"
#include "model/encoder_model.hpp"
#include "model/engine/token_batch.hpp"
#include "model/families/registry.hpp"
#include "model/lm_score_head.hpp"

namespace warden::classify {

std::string_view classifier_kind_name(ClassifierKind kind) noexcept {
  return kind == ClassifierKind::Reranker ? "reranker" : "classifier";
}

float sigmoid(float logit) noexcept {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logit))));
}

std::vector<embed::TokenInfo> SequenceClassifier::tokenize(std::string_view /*text*/) const {
  throw Error(ErrorKind::Unsupported, fmt::format("{} has no tokenizer to report tokens with", id()));
}

NeuralClassifier::NeuralClassifier(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                                   std::string_view rerank_template)
    : id_(std::filesystem::absolute(dir).lexically_normal().filename().string()),
      model_(model::load_encoder_model(dir, pool, active_isa(), precision)),
      pool_(pool) {
  if (id_.empty()) id_ = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  tokenizer_ = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::from_directory(dir));
  if (const std::string spec = model::llm_rerank_template(model_->config, dir, rerank_template);
      !spec.empty()) {
    model_->scores_with_lm_head = true;
    rerank_prompt_ = std::make_unique<RerankPrompt>(classify::rerank_template(spec), *tokenizer_, dir);
    const auto& ids = rerank_prompt_->score_ids();
    model_->head = model::lm_score_head(*model_, ids[0],
                                        ids.size() > 1 ? std::optional(ids[1]) : std::nullopt, active_isa());
  } else if (!rerank_template.empty()) {
    throw Error(
        ErrorKind::InvalidArgument,
        fmt::format("{} is not a causal LM without a Pooling module: a reranker template does not apply "
                    "to it",
                    dir.string()));
  }
  if (!model_->head) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} has no sequence-classification head (its architecture is not "
                            "*ForSequenceClassification): serve it as an embedding model",
                            dir.string()));
  }
  // Never let the tokenizer emit more tokens than the model takes.
  const auto& own = tokenizer_->truncation();
  max_input_tokens_ = model_->max_input_tokens(own ? std::optional(own->max_length) : std::nullopt);
  // Batches are packed: padding would only add tokens.
  tokenizer_->set_padding(std::nullopt);
  const std::size_t n = model_->head->labels();
  const auto& names = model_->config.id2label;
  labels_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    // transformers names unnamed labels LABEL_i; a config whose id2label disagrees with the
    // head's size is named the same way rather than half-trusted.
    labels_.push_back(names.size() == n ? names[i] : fmt::format("LABEL_{}", i));
  }
}

NeuralClassifier::~NeuralClassifier() = default;

std::size_t NeuralClassifier::hidden_size() const noexcept {
  return model_->encoder.dims().hidden;
}

ClassifierKind NeuralClassifier::kind() const noexcept {
  return labels_.size() == 1 ? ClassifierKind::Reranker : ClassifierKind::Classifier;
}

embed::PreparedInput NeuralClassifier::prepare(std::string_view text, std::optional<std::string_view> pair,
                                               const embed::InputOptions& options) const {
  if (rerank_prompt_) return prepare_llm_pair(text, pair, options);
  if (!options.prompt.empty()) {
    throw Error(ErrorKind::InvalidArgument, "sequence classifiers take no prompt");
  }
  tokenizer::EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  std::optional<tokenizer::TruncationParams> truncation;  // none without truncate: count them all
  if (options.truncate) {
    tokenizer::TruncationParams t;
    t.max_length = max_input_tokens_;
    // A pair is cut as HF tokenizers' longest_first cuts it (the longer text first, until
    // both are as long, then both): what transformers' truncation=True, sentence-transformers'
    // CrossEncoder and TEI do, whatever the folder's tokenizer.json says, so the scores match
    // theirs. A long query is cut before a short passage.
    t.strategy = tokenizer::TruncationStrategy::LongestFirst;
    t.direction = options.side == embed::TruncationSide::Left ? tokenizer::Direction::Left
                                                              : tokenizer::Direction::Right;
    truncation = t;
  }
  tokenizer::Encoding e =
      pair ? tokenizer_->encode_pair(text, *pair, eo, truncation) : tokenizer_->encode(text, eo, truncation);
  if (!options.truncate && e.size() > max_input_tokens_) {
    throw Error(
        ErrorKind::InvalidInput,
        fmt::format("input has {} tokens, more than the model's maximum of {}", e.size(), max_input_tokens_));
  }
  if (e.size() == 0) throw Error(ErrorKind::InvalidInput, "input has no tokens");
  embed::PreparedInput p;
  p.ids = std::move(e.ids);
  // Models without token types (DistilBERT: 0, RoBERTa/XLM-R: 1) take all zeros, which is
  // what an empty type_ids means; BERT takes the pair template's 0/1.
  if (model_->encoder.dims().type_vocab > 1) p.type_ids = std::move(e.type_ids);
  p.tokens = p.ids.size();
  return p;
}

embed::PreparedInput NeuralClassifier::prepare_llm_pair(std::string_view query,
                                                        std::optional<std::string_view> document,
                                                        const embed::InputOptions& options) const {
  if (!document) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("{} is an LLM reranker: it scores a query with a document, not one text", id_));
  }
  tokenizer::EncodeOptions eo;
  eo.add_special_tokens = options.add_special_tokens;
  std::optional<tokenizer::TruncationParams> truncation;
  if (options.truncate) {
    tokenizer::TruncationParams t;
    t.max_length = max_input_tokens_;
    t.strategy = tokenizer::TruncationStrategy::LongestFirst;  // Qwen3's card: 'longest_first' on one text
    t.direction = options.side == embed::TruncationSide::Left ? tokenizer::Direction::Left
                                                              : tokenizer::Direction::Right;
    truncation = t;
  }
  embed::PreparedInput p;
  p.ids = rerank_prompt_->encode(*tokenizer_, options.prompt, query, *document, eo, truncation);
  if (!options.truncate && p.ids.size() > max_input_tokens_) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("input has {} tokens, more than the model's maximum of {}", p.ids.size(),
                            max_input_tokens_));
  }
  p.tokens = p.ids.size();
  return p;
}

void NeuralClassifier::classify_prepared(std::span<const embed::PreparedInput* const> inputs,
                                         std::span<float> logits) const {
  const std::size_t labels = labels_.size();
  if (logits.size() != inputs.size() * labels) {
    throw Error(ErrorKind::Internal, fmt::format("classify_prepared: {} floats for {} inputs of {} labels",
                                                 logits.size(), inputs.size(), labels));
  }
  if (inputs.empty()) return;
  model::engine::TokenBatch batch;
  for (const embed::PreparedInput* p : inputs) batch.add(p->ids, p->type_ids);
  model_->encoder.validate(batch);
  thread_local model::engine::EncoderWorkspace workspace;
  const auto hidden = model_->encoder.forward(batch, workspace, pool_);
  model::heads::HeadResults results;
  results.scores = logits;
  model_->head->apply(model::heads::head_pass(batch, hidden, model_->encoder.dims().hidden, pool_), results);
}

std::optional<std::uint32_t> NeuralClassifier::unknown_token_id() const noexcept {
  return embed::unknown_token_id(*tokenizer_);
}

std::vector<embed::TokenInfo> NeuralClassifier::tokenize(std::string_view text) const {
  tokenizer::EncodeOptions eo;
  eo.with_tokens = true;
  // Untruncated: the guard weighs the whole text, not what fits the model.
  return embed::token_infos(tokenizer_->encode(text, eo, std::nullopt));
}

}  // namespace warden::classify

#pragma once
// Sequence classification: cross-encoder rerankers (one label: a relevance logit per
// query/passage pair) and classifiers (several labels, TEI's /predict). Like the Embedder,
// work is split in two stages so that the server can batch pairs across requests:
//   prepare()            text (+ pair) -> PreparedInput; thread-safe, on tokenization workers;
//   classify_prepared()  a batch of prepared inputs -> raw logits; one compute thread at a time.
// Scores (sigmoid, softmax) are the caller's business: the routes choose them per request.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/precision.hpp"
#include "embed/embedder.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden {
class ThreadPool;
namespace model {
struct EncoderModel;
}
}  // namespace warden

namespace warden::classify {

class RerankPrompt;

enum class ClassifierKind {
  Reranker,    // one label: a relevance logit
  Classifier,  // several labels
};

std::string_view classifier_kind_name(ClassifierKind kind) noexcept;

// A reranker's relevance score from its logit, 1 / (1 + e^-x) in double: what TEI's /rerank,
// /v1/rerank and `warden rerank` report unless raw scores are asked for.
float sigmoid(float logit) noexcept;

class SequenceClassifier {
 public:
  virtual ~SequenceClassifier() = default;

  [[nodiscard]] virtual std::string_view id() const noexcept = 0;
  [[nodiscard]] virtual ClassifierKind kind() const noexcept = 0;
  // Label names by id, as many as the model has logits ("LABEL_i" where config.json names none).
  [[nodiscard]] virtual const std::vector<std::string>& labels() const noexcept = 0;
  // Most tokens one input (a pair counts as one) may have after truncation.
  [[nodiscard]] virtual std::size_t max_input_tokens() const noexcept = 0;
  // Whether prepare() takes a task instruction (InputOptions::prompt): a yes/no reranker's.
  [[nodiscard]] virtual bool takes_instruction() const noexcept { return false; }

  // Thread-safe. A pair is encoded with the tokenizer's pair template; truncation keeps the
  // first text (only_second, falling back to longest_first when the second alone cannot
  // absorb the excess), on options.side. options.prompt must be empty. Throws
  // Error(InvalidInput) for invalid UTF-8 and, with truncate = false, for an input longer
  // than max_input_tokens().
  [[nodiscard]] virtual embed::PreparedInput prepare(std::string_view text,
                                                     std::optional<std::string_view> pair,
                                                     const embed::InputOptions& options) const = 0;
  // Raw logits of `inputs` into logits (inputs.size() x labels().size(), row-major). A row
  // never depends on its batch-mates.
  virtual void classify_prepared(std::span<const embed::PreparedInput* const> inputs,
                                 std::span<float> logits) const = 0;

  // The id the tokenizer gives text outside its vocabulary, if it has one (as
  // Embedder::unknown_token_id): the guard abstains on inputs made mostly of it.
  [[nodiscard]] virtual std::optional<std::uint32_t> unknown_token_id() const noexcept {
    return std::nullopt;
  }
  // One text's tokens with byte offsets (special tokens have none), as Embedder::tokenize:
  // the guard weighs the characters unknown tokens cover. Error(Unsupported) by default.
  [[nodiscard]] virtual std::vector<embed::TokenInfo> tokenize(std::string_view text) const;
};

// A SequenceClassifier over a HuggingFace *ForSequenceClassification folder.
class NeuralClassifier final : public SequenceClassifier {
 public:
  // Loads the model and its tokenizer; `pool` (not owned, may be null) runs the kernels.
  // `rerank_template` (classify/rerank_template.hpp: a name or a .json file) scores a causal LM's
  // folder as an LLM reranker with that template; empty: the folder's family's own, if any.
  // Error(InvalidArgument) when the folder's model has no classification head.
  NeuralClassifier(const std::filesystem::path& dir, ThreadPool* pool,
                   Precision precision = Precision::Float32, std::string_view rerank_template = {});
  ~NeuralClassifier() override;

  [[nodiscard]] std::string_view id() const noexcept override { return id_; }
  [[nodiscard]] ClassifierKind kind() const noexcept override;
  [[nodiscard]] const std::vector<std::string>& labels() const noexcept override { return labels_; }
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return max_input_tokens_; }
  // An LLM reranker (Qwen3-Reranker, mxbai-rerank-v2, ...) puts the pair into its template's
  // prompt (classify/rerank_prompt.hpp), options.prompt being the instruction (empty: the
  // template's default); a single text is Error(InvalidInput). Other classifiers take no prompt.
  [[nodiscard]] embed::PreparedInput prepare(std::string_view text, std::optional<std::string_view> pair,
                                             const embed::InputOptions& options) const override;
  void classify_prepared(std::span<const embed::PreparedInput* const> inputs,
                         std::span<float> logits) const override;
  [[nodiscard]] std::optional<std::uint32_t> unknown_token_id() const noexcept override;
  [[nodiscard]] std::vector<embed::TokenInfo> tokenize(std::string_view text) const override;

  [[nodiscard]] const model::EncoderModel& model() const noexcept { return *model_; }
  [[nodiscard]] bool takes_instruction() const noexcept override { return rerank_prompt_ != nullptr; }
  // The encoder's width (what the server sizes its batches by).
  [[nodiscard]] std::size_t hidden_size() const noexcept;

 private:
  [[nodiscard]] embed::PreparedInput prepare_llm_pair(std::string_view query,
                                                      std::optional<std::string_view> document,
                                                      const embed::InputOptions& options) const;

  std::string id_;
  std::unique_ptr<model::EncoderModel> model_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<RerankPrompt> rerank_prompt_;  // an LLM reranker's prompt; null for the others
  ThreadPool* pool_;
  std::size_t max_input_tokens_ = 0;
  std::vector<std::string> labels_;
};

}  // namespace warden::classify

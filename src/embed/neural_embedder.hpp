#pragma once
// An Embedder over a HuggingFace encoder model folder: tokenizer (prompt, truncation) ->
// packed batch -> encoder -> pooling (the folder's sentence-transformers setting). embed()
// adds the L2 normalisation; embed_prepared() leaves the vectors as pooled.
//
// Semantics of the Embedder stages here:
//  * prepare(): the prompt is prepended to the text (sentence-transformers' prompt + text)
//    and the whole is tokenized with the model's special tokens. truncate = true keeps
//    max_input_tokens() tokens, cutting text tokens on the requested side and keeping the
//    special tokens (HF's truncation); truncate = false rejects a longer input.
//    prompt_tokens counts the leading tokens that sentence-transformers leaves out of
//    pooling when the folder's Pooling has include_prompt = false: the special tokens before
//    the text (e.g. [CLS]) plus the tokens that start inside the prompt's bytes (after a
//    left truncation only those that are left). 0 without a prompt.
//  * prepare_ids(): ids are used as given (the client adds special tokens, as in TEI),
//    checked against the model's vocabulary, truncated by plain slicing; a prompt cannot
//    be applied to ids (Error(InvalidInput)).
//  * tokenize(): TokenInfo::text is the vocabulary's token string ("##ing", "▁the"); start
//    and stop are byte offsets into prompt + text (into the text alone without a prompt),
//    absent for special tokens. Truncation as prepare() does it.

#include <filesystem>
#include <future>
#include <memory>
#include <string>

#include "embed/embedder.hpp"
#include "model/embedder_heads.hpp"
#include "model/encoder_model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden {
class ThreadPool;
}  // namespace warden

namespace warden::embed {

class NeuralEmbedder final : public Embedder {
 public:
  // Loads the model and its tokenizer; `pool` (not owned, may be null) runs the kernels;
  // `precision` is the encoder's (docs/precision.md).
  // `pooling`, when not empty, overrides the folder's (model::override_pooling: cls, mean, max,
  // lasttoken, splade).
  NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision = Precision::Float32,
                 std::string_view pooling = {});
  ~NeuralEmbedder() override;

  [[nodiscard]] std::string_view id() const noexcept override { return id_; }
  [[nodiscard]] std::size_t dim() const noexcept override;
  [[nodiscard]] std::size_t token_dim() const noexcept override;
  [[nodiscard]] bool semantic() const noexcept override { return true; }
  [[nodiscard]] std::string_view pooling() const noexcept override;
  // The vocabulary's [UNK] (WordPiece) or <unk> (BPE/Unigram) token, when it has one.
  [[nodiscard]] std::optional<std::uint32_t> unknown_token_id() const noexcept override;
  // The model's positions (less the position offset), capped by the tokenizer file's own
  // truncation max_length when it sets a smaller one.
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return max_input_tokens_; }

  [[nodiscard]] PreparedInput prepare(std::string_view text, const InputOptions& options) const override;
  [[nodiscard]] PreparedInput prepare_ids(std::span<const std::uint32_t> ids,
                                          const InputOptions& options) const override;
  void embed_prepared(std::span<const PreparedInput* const> inputs, std::span<float> out) const override;
  // The encoder's last hidden states (tokens x hidden), special tokens included.
  [[nodiscard]] std::vector<Embeddings> embed_tokens(
      std::span<const PreparedInput* const> inputs) const override;
  // The pooled vector, and bge-m3's sparse and multi-vector outputs when the folder has their
  // heads (sparse_linear.pt, colbert_linear.pt): FlagEmbedding's M3 outputs. Sparse weights
  // leave out the tokenizer's cls, eos, pad and unk tokens, as FlagEmbedding does. A SPLADE
  // folder (modules.json's SpladePooling) gives its sparse vector alone; embed_prepared() is
  // then Error(Unsupported). A ColBERT (PyLate or Stanford folder) gives its token vectors alone:
  // a query's every token (its [MASK] expansion included), a document's but its punctuation.
  [[nodiscard]] RetrievalOutputs retrieval_outputs() const noexcept override;
  [[nodiscard]] std::size_t multi_vector_dim() const noexcept override;
  [[nodiscard]] std::vector<RetrievalVectors> embed_retrieval(
      std::span<const PreparedInput* const> inputs) const override;
  [[nodiscard]] std::vector<TokenInfo> tokenize(std::string_view text,
                                                const InputOptions& options) const override;
  [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids,
                                   bool skip_special_tokens) const override;
  // From config_sentence_transformers.json, with each task adapter's instruction (config.json's
  // task_instructions) under the task's name where that file has no prompt of the name; empty
  // when the folder has neither.
  [[nodiscard]] const std::map<std::string, std::string>& prompts() const noexcept override;
  [[nodiscard]] std::optional<std::string> default_prompt_name() const override;
  // config.json's task adapters (jina-embeddings-v3's lora_adaptations), in their order.
  [[nodiscard]] std::span<const std::string> tasks() const noexcept override { return tasks_; }

  [[nodiscard]] const model::EncoderModel& model() const noexcept { return *model_; }
  [[nodiscard]] const tokenizer::Tokenizer& tokenizer() const noexcept { return *tokenizer_; }

 private:
  NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool, Precision precision,
                 std::string_view pooling, std::future<std::unique_ptr<tokenizer::Tokenizer>> tokenizer);

  // Tokenizes `input` (prompt + text) with the options' special tokens and truncation;
  // Error(InvalidInput) when it is too long and truncate is false.
  [[nodiscard]] tokenizer::Encoding encode(std::string_view input, const InputOptions& options,
                                           bool with_tokens) const;
  // Packs inputs into `batch`, runs the encoder and describes the pass for the heads (`prompts` and
  // `queries` hold its per-input spans).
  [[nodiscard]] model::heads::HeadPass forward(std::span<const PreparedInput* const> inputs,
                                               model::engine::TokenBatch& batch,
                                               std::vector<std::size_t>& prompts,
                                               std::vector<std::uint8_t>& queries) const;

  std::string id_;
  std::unique_ptr<model::EncoderModel> model_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  ThreadPool* pool_;
  std::size_t max_input_tokens_ = 0;
  tokenizer::TruncationParams truncation_;  // the tokenizer's own, with max_length = max_input_tokens_
  model::Heads heads_;                      // what each pass gives (model/embedder_heads.hpp); views model_
  std::map<std::string, std::string> prompts_;  // see prompts()
  std::vector<std::string> tasks_;              // see tasks()
  // The adapter index of options.task (-1 for none); Error(InvalidArgument) for a task the model
  // does not have.
  [[nodiscard]] std::int32_t adapter_of(const InputOptions& options) const;

  // A ColBERT's marker and expansion tokens (PyLate's preprocess), when the model is one.
  struct ColbertTokens {
    std::optional<std::uint32_t> query_marker;
    std::optional<std::uint32_t> document_marker;
    std::uint32_t expansion = 0;  // the [MASK] queries are padded with
  };
  std::optional<ColbertTokens> colbert_;
  // A ColBERT query or document: cut to its length less the marker, the marker inserted after
  // the first token, a query padded with [MASK] to its length.
  [[nodiscard]] PreparedInput prepare_colbert(std::string_view input, const InputOptions& options) const;
};

}  // namespace warden::embed

#pragma once
// A loaded HuggingFace encoder model: its config, the encoder, the optional
// classification head and the sentence-transformers settings (pooling, prompts).

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/cpu_features.hpp"
#include "core/model_kind.hpp"
#include "model/engine/encoder.hpp"
#include "model/formats/weights.hpp"
#include "model/heads/classifier_head.hpp"
#include "model/heads/colbert_config.hpp"
#include "model/heads/dense_modules.hpp"
#include "model/heads/retrieval_heads.hpp"
#include "model/metadata/config.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model {

namespace families {
struct Family;
}

struct EncoderModel {
  std::filesystem::path dir;
  metadata::ModelConfig config;
  const families::Family* family = nullptr;  // model/families/: what it was loaded as
  // The mapped checkpoint. Declared before the encoder, whose embedding tables may view
  // into it, so that it outlives them.
  std::unique_ptr<formats::ModelWeights> weights;
  std::string weight_prefix;  // the encoder's tensors' prefix in `weights` ("bert.", or "")
  engine::Encoder encoder;
  std::optional<heads::ClassifierHead> head;
  metadata::PoolingConfig pooling;  // 1_Pooling/config.json, else mean (sentence-transformers' default)
  // The Dense modules after the Pooling (EmbeddingGemma's projections), in order; empty: none.
  std::vector<heads::DenseModule> pooled_dense;
  metadata::StConfig st;  // prompts; empty when the folder has no such file
  // sentence_bert_config.json's max_seq_length, when the folder has one.
  std::optional<std::size_t> max_seq_length;
  // bge-m3's sparse_linear.pt and colbert_linear.pt, when the folder has them.
  std::optional<heads::LexicalHead> lexical;
  std::optional<heads::MultiVectorHead> multi_vector;
  // A SPLADE model's MLM head, when modules.json has a SpladePooling module.
  std::optional<heads::SpladeHead> splade;
  // A ColBERT's query/document encoding (PyLate's config or Stanford's artifact.metadata); its
  // projection is multi_vector (every token kept).
  std::optional<heads::ColbertConfig> colbert;
  // A causal LM scoring pairs with rows of its LM head (llm_rerank_template). Its head is
  // attached by whoever holds the tokenizer that names the score tokens
  // (model/lm_score_head.hpp); until then `head` is empty.
  bool scores_with_lm_head = false;

  [[nodiscard]] ModelKind kind() const noexcept;
  // The most tokens an input may have: sentence_bert_config.json's max_seq_length when the
  // folder has one (where sentence-transformers and TEI cut), else `tokenizer_max` (the
  // tokenizer.json's own truncation) when set, else the model's positions; never more than
  // the positions.
  [[nodiscard]] std::size_t max_input_tokens(std::optional<std::size_t> tokenizer_max) const noexcept;
};

// The architectures config.json may name, comma-separated, for error messages.
std::string supported_architectures();
// The HF class Warden runs for a config (its first `architectures` entry, or the base model
// of its model_type), e.g. "JinaBertForSequenceClassification"; Error(Unsupported) as
// load_encoder_model would raise it. `dir` names the folder in the message.
std::string architecture_name(const metadata::ModelConfig& config, const std::filesystem::path& dir);

// The reranker template a folder's causal LM scores pairs with, or empty when the folder holds
// an embedder: a *ForCausalLM without a sentence-transformers Pooling module (the LLM rerankers'
// repos ship none, the decoder embedders' have one), scored with `named` (a template's name or
// file, e.g. --rerank-template) when given, else with its family's own (Qwen3's card); empty when
// neither names one. `config` is the folder's config.json.
std::string llm_rerank_template(const metadata::ModelConfig& config, const std::filesystem::path& dir,
                                std::string_view named = {});

// Loads config.json, the safetensors weights and the sentence-transformers files of a
// model folder. Errors: NotFound (no folder, no config, no weights), Unsupported (an
// architecture, activation or position scheme Warden does not run; the message lists
// what is supported), CorruptFile (a missing or mis-shaped tensor, named).
// `pool` (may be null) packs the layers in parallel. `precision` is that of the encoder's
// dense layers and word embeddings (docs/precision.md); classification heads stay float32.
std::unique_ptr<EncoderModel> load_encoder_model(const std::filesystem::path& dir, ThreadPool* pool = nullptr,
                                                 Isa isa = active_isa(),
                                                 Precision precision = Precision::Float32);

// Pools an embedder otherwise than its folder says, as TEI's --pooling does: "cls", "mean",
// "max", "lasttoken" (or "last-token") replace the pooling mode; "splade" makes it a SPLADE
// model from its *ForMaskedLM head (max of log(1 + ReLU)), for the repos without
// sentence-transformers' SpladePooling module. Error(InvalidArgument) for another name,
// Error(Unsupported) for splade on a model without such a head, or on a classifier. An LLM
// reranker's model (scores_with_lm_head) so pooled becomes an embedder.
void override_pooling(EncoderModel& model, std::string_view pooling, Isa isa = active_isa(),
                      Precision precision = Precision::Float32);

}  // namespace warden::model

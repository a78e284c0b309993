#pragma once
// A model family: everything Warden knows about one HF architecture lineage (BERT,
// RoBERTa/XLM-R, Qwen3, ...) in one descriptor. Its file (model/families/<name>.cpp) says
// which HF classes and model_types it answers to, reads the config.json keys only it has,
// translates the config into the shared encoder's plan (dimensions, tensor names, biases,
// positions, attention options), says where its checkpoints keep the encoder, builds its
// classification head and lists what it can do (ONNX reduction, ahead-of-time quantisation,
// an MLM head for SPLADE, the template its LM scores pairs in). model/families/registry.cpp lists the
// families; the loader, the quantiser and the catalogue ask the descriptor instead of testing
// names, so that a new family is its own file and one registry line.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "core/error.hpp"
#include "model/engine/encoder.hpp"
#include "model/engine/encoder_reader.hpp"
#include "model/engine/weight_reader.hpp"
#include "model/formats/json_fields.hpp"
#include "model/formats/weights.hpp"
#include "model/heads/classifier_head.hpp"
#include "model/metadata/config.hpp"
#include "model/onnx/onnx_encoder.hpp"

namespace warden::model::families {

// What an HF class does with the family's encoder.
enum class ClassRole {
  Encoder,          // the bare model (BertModel)
  Classifier,       // *ForSequenceClassification: the family's head
  MaskedLm,         // *ForMaskedLM: the encoder alone, or SPLADE over the family's MLM head
  CausalLm,         // a decoder's *ForCausalLM used as an encoder (Qwen3-Embedding)
  StanfordColbert,  // colbert-ir's HF_ColBERT: BERT under "bert." plus its projection
};

struct FamilyClass {
  std::string_view name;
  ClassRole role = ClassRole::Encoder;
};

// The settings of config.json that only one family has, read by that family's read_config and
// handed back to its plan and head (each family derives its own; see e.g. deberta_v2.cpp).
struct FamilySettings {
  virtual ~FamilySettings() = default;
};

// The shared encoder's plan for one checkpoint: filled with the common dimensions, then
// adjusted by the family.
struct EncoderPlan {
  engine::EncoderDims dims;
  engine::LayerNames names;
  engine::LayerBiases biases;
  engine::RelativeSpec relative;
};

// The tensors of a *ForMaskedLM head (transformers' BertLMPredictionHead and its kin): a
// transform (dense, activation, LayerNorm) and a decoder tied to the word embeddings.
struct MlmHeadNames {
  std::string_view transform, norm, decoder, bias, tied_bias;
  bool exact_gelu = false;                   // always erf gelu (RobertaLMHead), else hidden_act
  std::optional<float> fixed_norm_eps = {};  // DistilBERT's vocab_layer_norm: 1e-12 whatever the config
};

// What the head builder reads from: the encoder's tensors (under its prefix) and the root.
struct HeadSource {
  const engine::WeightReader& encoder;
  const engine::WeightReader& root;
  const metadata::ModelConfig& config;
  const engine::EncoderDims& dims;
  const std::filesystem::path& dir;
};

// The graph exports Warden reduces (model/onnx/onnx_encoder.hpp): the names of the classifier's two
// layers in the graph, and the activation between them.
struct OnnxSupport {
  model::onnx::HeadNames head;
  std::string_view head_activation;
};

// What a family may do once its encoder weights are read: refuse a variant only the weights
// show, or read tables the shared reader does not (MPNet's relative-position bias).
struct FinishSource {
  const formats::ModelWeights& weights;
  const std::string& prefix;
  const metadata::ModelConfig& config;
  const engine::EncoderDims& dims;
};

struct Family {
  std::string_view name;  // "bert"
  std::span<const FamilyClass> classes;
  std::span<const std::string_view> model_types;  // the model_types whose keys it reads
  // Remote-code config classes (auto_map's AutoConfig) that make a config this family's whatever
  // its "architectures" say: jina-embeddings-v3's remote code calls its model XLMRobertaModel,
  // a name stock XLM-R has too, and the name is then looked up among this family's classes only.
  std::span<const std::string_view> remote_configs = {};
  // The class a config of its model_type without "architectures" names (its base model);
  // null: its first Encoder class.
  std::string_view (*base_class)(const metadata::ModelConfig& config) = nullptr;
  // Reads the family's keys into `config` (its shape keys when it names them its own way) and
  // returns its own settings, or null. Error(CorruptFile) naming the key. Null: BERT's shape
  // keys only (config_keys::read_bert_shape).
  std::shared_ptr<const FamilySettings> (*read_config)(const formats::json_fields::Fields& f,
                                                       metadata::ModelConfig& config) = nullptr;
  // config.json's position_embedding_type values it runs ("absolute" for most).
  std::span<const std::string_view> position_types = {};
  // The key whose activation names its feed-forward (empty: the family's plan chooses it).
  std::string_view activation_key = "hidden_act";
  // Adjusts `plan` (filled with the common dimensions and BERT's names) for this family.
  void (*plan)(const metadata::ModelConfig& config, EncoderPlan& plan,
               const std::filesystem::path& dir) = nullptr;
  std::string_view weight_prefix;  // the encoder's prefix in a *ForSequenceClassification checkpoint
  // Gives the checkpoint's tensors the names the reader asks for, before anything is read (null:
  // they have them already).
  void (*adapt_weights)(formats::ModelWeights& weights) = nullptr;
  void (*finish)(const FinishSource& source, engine::EncoderWeights& weights) = nullptr;
  heads::ClassifierHead (*classifier)(const HeadSource& source) = nullptr;  // null: no classifier class
  const MlmHeadNames* mlm_head = nullptr;  // null: SPLADE cannot use its *ForMaskedLM
  const OnnxSupport* onnx = nullptr;       // null: its ONNX exports are not read
  bool quantize_ahead = false;             // `warden quantize` writes folders of its model_types
  // The reranker template (classify/rerank_template.hpp) its causal LM scores pairs with when
  // the folder has no sentence-transformers Pooling module ("qwen3-reranker"); empty: a causal LM
  // of the family is an LLM reranker only when a template is named for it.
  std::string_view rerank_template = {};
  // transformers' default pad_token_id for its config class (none: no default), and whether
  // position ids start after it (RoBERTa's create_position_ids_from_input_ids).
  std::optional<std::int64_t> default_pad_token_id = {};
  bool positions_after_pad = false;
  // Whether num_attention_heads must divide hidden_size (false: heads have their own head_dim),
  // and the key naming it in an error.
  bool heads_divide_hidden = true;
  std::string_view heads_key = "num_attention_heads";
};

// The settings a family stored in its config (the family's own type), for its plan and head.
template <typename Settings>
const Settings& settings_of(const metadata::ModelConfig& config) {
  const auto* s = dynamic_cast<const Settings*>(config.family_settings.get());
  if (s == nullptr) throw Error(ErrorKind::Internal, "a model family's settings are missing from its config");
  return *s;
}

}  // namespace warden::model::families

// DistilBERT (modeling_distilbert.py): its own config names (dim, n_layers, n_heads,
// hidden_dim, activation), no token types, a fixed LayerNorm epsilon, q_lin/k_lin/v_lin layers
// and the pre_classifier-ReLU-classifier head.

#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    {"DistilBertModel", ClassRole::Encoder},
    {"DistilBertForMaskedLM", ClassRole::MaskedLm},
    {"DistilBertForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"distilbert"};

constexpr engine::LayerNames kNames{"transformer.layer.", "attention.q_lin",   "attention.k_lin",
                                    "attention.v_lin",    "attention.out_lin", "sa_layer_norm",
                                    "ffn.lin1",           "ffn.lin2",          "output_layer_norm"};

// DistilBertForMaskedLM: vocab_transform, config.activation, vocab_layer_norm (eps 1e-12),
// vocab_projector's bias.
constexpr MlmHeadNames kMlmHead{"vocab_transform",
                                "vocab_layer_norm",
                                "vocab_projector",
                                "vocab_projector.bias",
                                "vocab_projector.bias",
                                false,
                                1e-12F};

// DistilBERT's head uses ReLU.
constexpr OnnxSupport kOnnx{{"pre_classifier", "classifier"}, "relu"};

std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  c.hidden_size = static_cast<std::size_t>(f.integer_in("dim", 1, kMaxHidden));
  c.num_hidden_layers = static_cast<std::size_t>(f.integer_in("n_layers", 1, kMaxLayers));
  c.num_attention_heads = static_cast<std::size_t>(f.integer_in("n_heads", 1, kMaxHidden));
  c.intermediate_size = static_cast<std::size_t>(f.integer_in("hidden_dim", 1, kMaxIntermediate));
  c.hidden_act = f.string("activation").value_or("gelu");
  c.sinusoidal_pos_embds = f.boolean("sinusoidal_pos_embds").value_or(false);
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-12;  // fixed in DistilBERT's modelling code, not configurable
  c.vocab_size = static_cast<std::size_t>(f.integer_in("vocab_size", 1, kMaxVocab));
  c.max_position_embeddings = optional_in(f, "max_position_embeddings", 1, kMaxPositions, 512);
  return nullptr;
}

void plan(const metadata::ModelConfig& /*config*/, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  p.dims.type_vocab = 0;
  p.names = kNames;
}

heads::ClassifierHead classifier(const HeadSource& s) {
  return dense_head(s, s.root, "pre_classifier", kernels::Activation::Relu, "classifier");
}

}  // namespace

extern const Family kDistilBertFamily;
const Family kDistilBertFamily{
    .name = "distilbert",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "distilbert.",
    .classifier = classifier,
    .mlm_head = &kMlmHead,
    .onnx = &kOnnx,
    .quantize_ahead = true,
    .default_pad_token_id = 0,
    .heads_key = "n_heads",
};

}  // namespace warden::model::families

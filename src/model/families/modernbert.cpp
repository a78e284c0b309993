// ModernBERT (transformers' modeling_modernbert.py): pre-LN layers over tok_embeddings + norm,
// rotary positions with a local and a global theta, sliding-window attention on all but every
// global_attn_every_n_layers-th layer, a gated MLP and ModernBertPredictionHead.

#include <fmt/format.h>

#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    // gte-modernbert-base and modernbert-embed-base are ModernBertModel, answerdotai/ModernBERT-*
    // the masked-LM class (its LM head is ignored here).
    {"ModernBertModel", ClassRole::Encoder},
    {"ModernBertForMaskedLM", ClassRole::MaskedLm},
    {"ModernBertForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"modernbert"};

// ModernBertEncoderLayer (pre-LN): attn_norm (none in layer 0), attn.Wqkv (Q, K, V stacked),
// attn.Wo, mlp_norm, mlp.Wi ([input | gate], act(input) · gate), mlp.Wo; ModernBertEmbeddings'
// tok_embeddings and norm; ModernBertModel's final_norm.
constexpr engine::LayerNames kNames{"layers.",    "attn.Wqkv",
                                    "",           "",
                                    "attn.Wo",    "attn_norm",
                                    "",           "mlp.Wo",
                                    "mlp_norm",   "mlp.Wi",
                                    "",           "embeddings.norm",
                                    false,        "embeddings.tok_embeddings.weight",
                                    "final_norm", false};

// ModernBertConfig's defaults. Layer l attends within |i - j| <= local_attention / 2 unless
// l % global_every == 0 (ModernBertAttention); it rotates with local_rope_theta when
// sliding_rope[l] (layer_types, which default to the same pattern), else global_rope_theta.
struct Settings : FamilySettings {
  std::size_t local_attention = 128;
  std::size_t global_every = 3;
  std::vector<bool> sliding_rope;
  double global_rope_theta = 160000.0;
  double local_rope_theta = 10000.0;
  bool norm_bias = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  bool classifier_bias = false;
  std::string classifier_pooling = "cls";  // or "mean"
  std::string classifier_activation = "gelu";
};

// ModernBertConfig (configuration_modernbert.py): its key names and defaults, the older
// global_rope_theta / local_rope_theta and the newer rope_parameters per layer type, and
// layer_types, which (as ModernBertRotaryEmbedding does) choose each layer's rotary base while
// global_attn_every_n_layers chooses its window (ModernBertAttention).
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  read_bert_shape(f, c, 8192);
  auto m = std::make_shared<Settings>();
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_activation").value_or("gelu");
  c.layer_norm_eps = read_eps(f, "norm_eps", 1e-5);
  m->local_attention = optional_in(f, "local_attention", 2, kMaxPositions, 128);
  m->global_every = optional_in(f, "global_attn_every_n_layers", 1, kMaxLayers, 3);
  m->norm_bias = f.boolean("norm_bias").value_or(false);
  m->attention_bias = f.boolean("attention_bias").value_or(false);
  m->mlp_bias = f.boolean("mlp_bias").value_or(false);
  m->classifier_bias = f.boolean("classifier_bias").value_or(false);
  m->classifier_pooling = f.string("classifier_pooling").value_or("cls");
  if (m->classifier_pooling != "cls" && m->classifier_pooling != "mean") {
    throw f.fail("classifier_pooling",
                 fmt::format("is \"{}\"; it must be cls or mean", m->classifier_pooling));
  }
  m->classifier_activation = f.string("classifier_activation").value_or("gelu");
  m->global_rope_theta = read_theta(f, "global_rope_theta", f.number("global_rope_theta").value_or(160000.0));
  m->local_rope_theta = read_theta(f, "local_rope_theta", f.number("local_rope_theta").value_or(10000.0));
  require_default_rope_scaling(f);
  read_layer_type_rope_parameters(f, m->global_rope_theta, m->local_rope_theta);
  const std::size_t layers = c.num_hidden_layers;
  if (auto sliding = read_sliding_layers(f, layers)) {
    m->sliding_rope = std::move(*sliding);
  } else {
    m->sliding_rope.assign(layers, false);
    for (std::size_t i = 0; i < layers; ++i) m->sliding_rope[i] = i % m->global_every != 0;
  }
  return m;
}

// ModernBertModel: pre-LN layers over tok_embeddings + norm (no position table, no token types);
// rotary over the whole head (rotate-half), with local_rope_theta on the layers layer_types
// marks sliding and global_rope_theta on the rest (ModernBertRotaryEmbedding); a window of
// local_attention / 2 on every layer but each global_attn_every_n_layers-th (ModernBertAttention);
// ModernBertMLP's act(input) · gate; biases as the flags say.
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& m = settings_of<Settings>(config);
  engine::EncoderDims& d = p.dims;
  p.names = kNames;
  d.pre_norm = true;
  d.position_embeddings = false;
  d.type_vocab = 0;
  d.gated_ffn = true;
  d.rotary_dims = config.head_dim();
  d.rotary_base = m.global_rope_theta;
  d.local_rotary_base = m.local_rope_theta;
  d.local_rotary_layers = m.sliding_rope;
  d.attention_window = m.local_attention / 2;
  d.windowed_layers.resize(d.layers);
  for (std::size_t l = 0; l < d.layers; ++l) d.windowed_layers[l] = l % m.global_every != 0;
  p.biases = {m.attention_bias, m.mlp_bias, m.mlp_bias, m.norm_bias};
}

// ModernBertForSequenceClassification: the first token or the mean (classifier_pooling),
// ModernBertPredictionHead (dense with classifier_bias, classifier_activation, norm), then the
// classifier, which always has a bias.
heads::ClassifierHead classifier(const HeadSource& s) {
  const auto& m = settings_of<Settings>(s.config);
  const std::size_t h = s.dims.hidden;
  heads::ClassifierHead c;
  c.pooling = m.classifier_pooling == "mean" ? metadata::PoolingMode::Mean : metadata::PoolingMode::Cls;
  c.dense = s.root.linear("head.dense", h, h, m.classifier_bias);
  c.activation = activation_named(m.classifier_activation, "classifier_activation", s.dir);
  c.norm = s.root.layer_norm("head.norm", h, m.norm_bias);
  c.norm_eps = s.dims.layer_norm_eps;
  c.out = s.root.linear("classifier", s.config.num_labels(), h);
  return c;
}

}  // namespace

extern const Family kModernBertFamily;
const Family kModernBertFamily{
    .name = "modernbert",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .activation_key = "hidden_activation",
    .plan = plan,
    .weight_prefix = "model.",
    .classifier = classifier,
};

}  // namespace warden::model::families

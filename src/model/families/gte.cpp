// GTE (Alibaba-NLP/new-impl's remote code, model_type "new": gte-*-en-v1.5,
// gte-multilingual-base/-reranker-base): post-LN layers with a gated MLP, rotary positions from
// rope_theta (with fixed NTK scaling) or an absolute table, and Q, K, V packed or apart.

#include <cmath>

#include <fmt/format.h>

#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    {"NewModel", ClassRole::Encoder},
    {"NewForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"new"};
constexpr std::string_view kPositionTypes[] = {"absolute", "rope"};

// NewLayer: attention.qkv_proj (Q, K, V stacked; or q_proj/k_proj/v_proj without pack_qkv),
// attention.o_proj, attn_ln; NewGatedMLP's up_gate_proj ([up | gate], no bias, act(gate) · up)
// and down_proj; mlp_ln.
constexpr engine::LayerNames kPackedNames{"encoder.layer.",
                                          "attention.qkv_proj",
                                          "",
                                          "",
                                          "attention.o_proj",
                                          "attn_ln",
                                          "",
                                          "mlp.down_proj",
                                          "mlp_ln",
                                          "mlp.up_gate_proj",
                                          "",
                                          "embeddings.LayerNorm",
                                          true};
constexpr engine::LayerNames kApartNames = [] {
  engine::LayerNames n = kPackedNames;
  n.q = "attention.q_proj";
  n.k = "attention.k_proj";
  n.v = "attention.v_proj";
  return n;
}();

struct Settings : FamilySettings {
  double rope_theta = 10000.0;
  std::optional<double> fixed_ntk_factor;  // rope_scaling {"type": "ntk", "factor": f}
  bool packed_qkv = true;                  // pack_qkv
};

// NewConfig (configuration.py): BERT's key names with NewConfig's defaults, rotary positions
// from rope_theta, and fixed NTK rope_scaling. What Warden does not run is refused by name.
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  read_bert_shape(f, c, 2048);
  if (!f.has("type_vocab_size")) c.type_vocab_size = 1;
  c.position_embedding_type = f.string("position_embedding_type").value_or("rope");
  auto s = std::make_shared<Settings>();
  s->rope_theta = f.number("rope_theta").value_or(10000.0);
  if (!std::isfinite(s->rope_theta) || s->rope_theta <= 1.0)
    throw f.fail("rope_theta", "must be a number above 1");
  if (const auto scaling = f.object("rope_scaling")) {
    const formats::json_fields::Fields r(*scaling, f.source());
    const std::string type = r.string("type").value_or("");
    if (type != "ntk") throw f.fail("rope_scaling", fmt::format("has type \"{}\"; supported: ntk", type));
    if (r.has("mixed_b")) throw f.fail("rope_scaling", "has mixed_b: mixed NTK scaling is not supported");
    const auto factor = r.number("factor");
    if (!factor || !std::isfinite(*factor) || *factor <= 0.0)
      throw f.fail("rope_scaling", "needs a positive factor");
    s->fixed_ntk_factor = *factor;
  }
  if (f.string("layer_norm_type").value_or("layer_norm") != "layer_norm") {
    throw f.fail("layer_norm_type", "is not layer_norm: RMSNorm GTE layers are not supported");
  }
  if (f.boolean("logn_attention_scale").value_or(false)) {
    throw f.fail("logn_attention_scale", "is true: log-n attention scaling is not supported");
  }
  s->packed_qkv = f.boolean("pack_qkv").value_or(true);
  return s;
}

// NewModel: post-LN layers with a gated MLP (act(gate) · up, no bias on up_gate_proj), rotary
// positions over the whole head from rope_theta (NewEmbeddings._init_rope), or an absolute
// table; type_vocab_size 0 means no token-type table.
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& s = settings_of<Settings>(config);
  p.names = s.packed_qkv ? kPackedNames : kApartNames;
  p.dims.gated_ffn = true;
  p.biases = {true, false, true};
  if (config.position_embedding_type != "rope") return;
  p.dims.position_embeddings = false;
  p.dims.rotary_dims = config.head_dim();
  p.dims.rotary_base = s.rope_theta;
  if (s.fixed_ntk_factor) {
    // NTKScalingRotaryEmbedding (mixed_b None), which applies at every length:
    // inv_freq = 1 / ((θ·f)^(2i/d)) / f^(2/d), float32 tensors and Python floats as upstream.
    const double f = *s.fixed_ntk_factor;
    const auto d = static_cast<double>(p.dims.rotary_dims);
    p.dims.rotary_inv_freq = kernels::rotary_inv_freq(s.rope_theta * f, p.dims.rotary_dims);
    const auto divisor = static_cast<float>(std::pow(f, 2.0 / d));
    for (float& v : p.dims.rotary_inv_freq) v /= divisor;
  }
}

}  // namespace

extern const Family kGteFamily;
const Family kGteFamily{
    .name = "gte",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .position_types = kPositionTypes,
    .plan = plan,
    .weight_prefix = "new.",
    .classifier = pooler_classifier,  // NewForSequenceClassification: NewPooler (dense, tanh), the classifier
};

}  // namespace warden::model::families

// Gemma3 used as an encoder (transformers' modeling_gemma3.py, Gemma3TextModel):
// google/embeddinggemma-300m. The decoders' layers (decoder.hpp) with Gemma's differences:
// q/k norms, a norm on each sublayer's output as well as its input (four per layer), every
// RMSNorm scaling by (1 + weight), the word embeddings scaled by sqrt(hidden), scores scaled by
// query_pre_attn_scalar^-0.5, a gelu-tanh gated MLP, and sliding-window layers beside full ones,
// each kind with its own rotary base. use_bidirectional_attention (EmbeddingGemma) makes both
// kinds bidirectional and the window symmetric.

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/families/decoder.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    // EmbeddingGemma's config names the bare text model.
    {"Gemma3TextModel", ClassRole::Encoder},
    {"Gemma3ForCausalLM", ClassRole::CausalLm},
};
constexpr std::string_view kModelTypes[] = {"gemma3_text"};

struct Settings : DecoderSettings {
  double local_rope_theta = 10000.0;
  double query_pre_attn_scalar = 256.0;
  // A sliding layer lets token i see j when |i - j| < window (j <= i as well when causal); 0: the
  // config sets no window.
  std::size_t window = 0;
  std::vector<bool> sliding;
  bool attention_bias = false;
};

// Gemma3TextConfig (configuration_gemma3.py) and its defaults: hidden_activation, rms_norm_eps,
// num_key_value_heads 4, head_dim 256, query_pre_attn_scalar 256, rope_theta 1e6 for the full
// layers and rope_local_base_freq 1e4 for the sliding ones (or rope_parameters per layer type),
// sliding_window 4096 — halved plus one, an exclusive bound, when use_bidirectional_attention —
// and layer_types, by default every sliding_window_pattern-th (6) layer full.
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  auto s = std::make_shared<Settings>();
  read_bert_shape(f, c, 131072);
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_activation").value_or("gelu_pytorch_tanh");
  c.layer_norm_eps = read_eps(f, "rms_norm_eps", 1e-6);
  read_decoder_heads(f, c, *s, 4, 256);
  s->query_pre_attn_scalar = f.number("query_pre_attn_scalar").value_or(256.0);
  if (!std::isfinite(s->query_pre_attn_scalar) || s->query_pre_attn_scalar <= 0.0) {
    throw f.fail("query_pre_attn_scalar", "must be a positive number");
  }
  if (f.number("attn_logit_softcapping")) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: attn_logit_softcapping is set; Warden runs Gemma3's attention without it",
                            f.source()));
  }
  s->causal = !f.boolean("use_bidirectional_attention").value_or(false);
  s->attention_bias = f.boolean("attention_bias").value_or(false);
  s->rope_theta = read_theta(f, "rope_theta", f.number("rope_theta").value_or(1000000.0));
  s->local_rope_theta =
      read_theta(f, "rope_local_base_freq", f.number("rope_local_base_freq").value_or(10000.0));
  require_default_rope_scaling(f);
  read_layer_type_rope_parameters(f, s->rope_theta, s->local_rope_theta);
  const std::size_t layers = c.num_hidden_layers;
  if (auto sliding = read_sliding_layers(f, layers)) {
    s->sliding = std::move(*sliding);
  } else {
    const std::size_t pattern = optional_in(f, "sliding_window_pattern", 1, kMaxLayers, 6);
    s->sliding.resize(layers);
    for (std::size_t i = 0; i < layers; ++i) s->sliding[i] = (i + 1) % pattern != 0;
  }
  // null: no window (Gemma3Attention's sliding_window None).
  std::size_t window = 0;
  if (f.has("sliding_window")) {
    window = static_cast<std::size_t>(f.integer_in("sliding_window", 2, kMaxPositions));
  } else if (!f.is_null("sliding_window")) {
    window = 4096;
  }
  if (window > 0) s->window = s->causal ? window : window / 2 + 1;
  return s;
}

// Gemma3TextModel: the decoders' plan with Gemma3Attention's q_norm / k_norm and scaling,
// Gemma3DecoderLayer's four norms, Gemma3RMSNorm's (1 + weight), Gemma3TextScaledWordEmbedding,
// and per layer type its window and rotary base (Gemma3RotaryEmbedding).
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& s = settings_of<Settings>(config);
  plan_decoder(s, p);
  p.names.q_norm = "self_attn.q_norm";
  p.names.k_norm = "self_attn.k_norm";
  p.names.ffn_norm = "pre_feedforward_layernorm";
  p.names.post_attn_norm = "post_attention_layernorm";
  p.names.post_ffn_norm = "post_feedforward_layernorm";
  p.names.norm_weights_from_one = true;
  engine::EncoderDims& d = p.dims;
  d.qk_norm = true;
  d.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(config.hidden_size)));
  d.attention_scale = static_cast<float>(std::pow(s.query_pre_attn_scalar, -0.5));
  d.local_rotary_base = s.local_rope_theta;
  d.local_rotary_layers = s.sliding;
  if (s.window > 0) {
    d.attention_window = s.window - 1;  // the encoder's window is inclusive: |i - j| <= it
    d.windowed_layers = s.sliding;
  }
  p.biases.attention = s.attention_bias;
}

}  // namespace

extern const Family kGemma3Family;
const Family kGemma3Family{
    .name = "gemma3",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .activation_key = "hidden_activation",
    .plan = plan,
    .weight_prefix = "model.",
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families

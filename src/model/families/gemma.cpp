// Gemma (the first generation; transformers' modeling_gemma.py, GemmaForCausalLM) used as an
// encoder: BAAI/bge-reranker-v2-gemma, an LLM reranker on gemma-2b scored by its "Yes" logit
// (its folder has no Pooling module, so the family's own template, bge-reranker-v2-gemma, applies).
// Llama's layers (decoder.hpp) with Gemma's differences: every RMSNorm scaling by (1 + weight),
// the word embeddings scaled by sqrt(hidden) and a gelu-tanh gated MLP; scores scaled by
// head_dim^-0.5 and no q/k norms or post-sublayer norms (those came with Gemma 2 and 3).

#include <cmath>

#include "model/families/decoder.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    {"GemmaForCausalLM", ClassRole::CausalLm},
    {"GemmaModel", ClassRole::Encoder},
};
constexpr std::string_view kModelTypes[] = {"gemma"};

struct Settings : DecoderSettings {
  bool attention_bias = false;
};

// GemmaConfig (configuration_gemma.py) and its defaults: 8192 positions, 16 key/value heads of
// 256, rope_theta 1e4, attention_bias false. The activation is hidden_activation, and
// gelu_pytorch_tanh when that is absent or null whatever hidden_act says: gemma-2b's first
// config.json said "gelu" (exact) for what was trained with the tanh approximation, and
// GemmaMLP since transformers 4.39 (as vLLM's Gemma) ignores hidden_act for that reason.
// use_bidirectional_attention (newer GemmaConfig) or is_causal false: bidirectional.
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  auto s = std::make_shared<Settings>();
  read_decoder_config(f, c, *s, 8192, "Gemma");
  read_decoder_heads(f, c, *s, 16, 256);
  c.hidden_act = f.string("hidden_activation").value_or("gelu_pytorch_tanh");
  if (f.boolean("use_bidirectional_attention").value_or(false)) s->causal = false;
  s->attention_bias = f.boolean("attention_bias").value_or(false);
  return s;
}

// GemmaModel: the decoders' plan with GemmaRMSNorm's (1 + weight) and the embeddings' scale (the
// normalizer sqrt(hidden_size), a float32 scalar here as in a float32 checkpoint).
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& s = settings_of<Settings>(config);
  plan_decoder(s, p);
  p.names.norm_weights_from_one = true;
  p.dims.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(config.hidden_size)));
  p.biases.attention = s.attention_bias;
}

}  // namespace

extern const Family kGemmaFamily;
const Family kGemmaFamily{
    .name = "gemma",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .activation_key = "hidden_activation",
    .plan = plan,
    .weight_prefix = "model.",
    .rerank_template = "bge-reranker-v2-gemma",
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families

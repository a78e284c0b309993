// Llama used as an encoder (transformers' modeling_llama.py): LlamaModel and LlamaForCausalLM
// checkpoints embedding by their pooling (LLM2Vec-style Llama embedders, Llama-based rerankers'
// backbones). The decoders' layers (decoder.hpp) with Llama's optional biases: attention_bias on
// q/k/v/o, mlp_bias on gate/up/down. Causal unless config.json says is_causal: false; Llama 3's
// rope_scaling ("llama3") is read by the decoders' shared keys.

#include "model/families/decoder.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    {"LlamaModel", ClassRole::Encoder},
    {"LlamaForCausalLM", ClassRole::CausalLm},
};
constexpr std::string_view kModelTypes[] = {"llama"};

struct Settings : DecoderSettings {
  bool attention_bias = false;
  bool mlp_bias = false;
};

// LlamaConfig (configuration_llama.py): the decoders' keys with its defaults (2048 positions),
// attention_bias and mlp_bias (false).
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  auto s = std::make_shared<Settings>();
  read_decoder_config(f, c, *s, 2048, "Llama");
  s->attention_bias = f.boolean("attention_bias").value_or(false);
  s->mlp_bias = f.boolean("mlp_bias").value_or(false);
  return s;
}

void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& s = settings_of<Settings>(config);
  plan_decoder(s, p);
  p.biases.attention = s.attention_bias;
  p.biases.ffn_in = p.biases.ffn_out = s.mlp_bias;
}

}  // namespace

extern const Family kLlamaFamily;
const Family kLlamaFamily{
    .name = "llama",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "model.",
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families

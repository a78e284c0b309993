// Qwen2 used as an encoder (transformers' modeling_qwen2.py): gte-Qwen2-*-instruct. The decoders'
// layers (decoder.hpp) with biases on q/k/v but none on o_proj and no q/k norms. Its attention is
// bidirectional when config.json says is_causal: false (gte-Qwen2 does): transformers >= 5.2's
// create_causal_mask and TEI honour the key, older transformers ignore it; Warden follows the
// newest upstream.

#include "model/families/decoder.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    // gte-Qwen2's config names the causal-LM class over bare Qwen2Model weights.
    {"Qwen2ForCausalLM", ClassRole::CausalLm},
    {"Qwen2Model", ClassRole::Encoder},
};
constexpr std::string_view kModelTypes[] = {"qwen2"};

// Qwen2Config (configuration_qwen2.py): the decoders' keys with its defaults (32768 positions).
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  auto s = std::make_shared<DecoderSettings>();
  read_decoder_config(f, c, *s, 32768, "Qwen2");
  return s;
}

// Qwen2Attention: q_proj, k_proj and v_proj with biases, o_proj without.
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  plan_decoder(settings_of<DecoderSettings>(config), p);
  p.biases.attention = true;
  p.biases.attention_out_unbiased = true;
}

}  // namespace

extern const Family kQwen2Family;
const Family kQwen2Family{
    .name = "qwen2",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "model.",
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families

// Qwen3 used as an encoder (transformers' modeling_qwen3.py): Qwen3-Embedding and, scoring with
// its LM head's "yes" and "no" rows, Qwen3-Reranker. Pre-norm decoder layers with RMSNorms,
// causal grouped-query attention with per-head q/k norms, rotary positions and a SwiGLU MLP.

#include "model/families/decoder.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    // Qwen3-Embedding's config names the causal-LM class over bare Qwen3Model weights; what the
    // folder's sentence-transformers files say decides the job.
    {"Qwen3ForCausalLM", ClassRole::CausalLm},
    {"Qwen3Model", ClassRole::Encoder},
};
constexpr std::string_view kModelTypes[] = {"qwen3"};

// Qwen3Config's defaults (configuration_qwen3.py), on top of the decoders' shared keys: biases
// on the attention projections or not. (Whether the LM head is tied to the word embeddings,
// lm_score_head.cpp reads from the checkpoint itself.)
struct Settings : DecoderSettings {
  bool attention_bias = false;
};

std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  auto q = std::make_shared<Settings>();
  read_decoder_config(f, c, *q, 32768, "Qwen3");
  q->attention_bias = f.boolean("attention_bias").value_or(false);
  return q;
}

// Qwen3Model: the decoders' plan (decoder.hpp), causal, with Qwen3Attention's q_norm / k_norm on
// each head before rotary, and biases on q/k/v/o when attention_bias says so.
void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& q = settings_of<Settings>(config);
  plan_decoder(q, p);
  p.names.q_norm = "self_attn.q_norm";
  p.names.k_norm = "self_attn.k_norm";
  p.dims.qk_norm = true;
  p.biases.attention = q.attention_bias;
}

}  // namespace

extern const Family kQwen3Family;
const Family kQwen3Family{
    .name = "qwen3",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "model.",
    .rerank_template = "qwen3-reranker",
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families

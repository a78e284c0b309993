// Qwen3 used as an encoder (transformers' modeling_qwen3.py): Qwen3-Embedding and, scoring with
// its LM head's "yes" and "no" rows, Qwen3-Reranker. Pre-norm decoder layers with RMSNorms,
// causal grouped-query attention with per-head q/k norms, rotary positions and a SwiGLU MLP.

#include <fmt/format.h>

#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace config_keys;

constexpr FamilyClass kClasses[] = {
    // Qwen3-Embedding's config names the causal-LM class over bare Qwen3Model weights; what the
    // folder's sentence-transformers files say decides the job.
    {"Qwen3ForCausalLM", ClassRole::CausalLm},
    {"Qwen3Model", ClassRole::Encoder},
};
constexpr std::string_view kModelTypes[] = {"qwen3"};

// Qwen3DecoderLayer (pre-norm, RMSNorm): input_layernorm, self_attn.{q,k,v}_proj (K and V
// narrower under grouped-query attention), self_attn.q_norm / k_norm (one head each), o_proj,
// post_attention_layernorm, mlp: down_proj(silu(gate_proj(x)) · up_proj(x)); Qwen3Model's
// embed_tokens (no embedding norm) and the final norm.
constexpr LayerNames kNames{.layer_prefix = "layers.",
                            .q = "self_attn.q_proj",
                            .k = "self_attn.k_proj",
                            .v = "self_attn.v_proj",
                            .attn_out = "self_attn.o_proj",
                            .attn_norm = "input_layernorm",
                            .ffn_in = "",
                            .ffn_out = "mlp.down_proj",
                            .ffn_norm = "post_attention_layernorm",
                            .ffn_gated = "mlp.gate_proj",
                            .ffn_gate = "mlp.up_proj",
                            .embedding_norm = "",
                            .gate_first = false,
                            .word_embeddings = "embed_tokens.weight",
                            .final_norm = "norm",
                            .first_attn_norm = true,
                            .q_norm = "self_attn.q_norm",
                            .k_norm = "self_attn.k_norm"};

// Qwen3Config's defaults: kv_heads key/value heads shared by consecutive query heads, heads of
// head_dim values (wider than hidden / heads in the real models), biases on the attention
// projections or not. (Whether the LM head is tied to the word embeddings, yes_no_head.cpp
// reads from the checkpoint itself.)
struct Settings : FamilySettings {
  std::size_t kv_heads = 0;
  std::size_t head_dim = 0;
  bool attention_bias = false;
  double rope_theta = 10000.0;
};

// Qwen3Config (configuration_qwen3.py): its key names and defaults; rms_norm_eps is the norms'
// epsilon. Scaled rotary positions (rope_scaling / rope_parameters other than "default") and the
// sliding-window layers (use_sliding_window) are refused by name: the embedding and reranking
// checkpoints use neither.
std::shared_ptr<const FamilySettings> read_config(const json_fields::Fields& f, ModelConfig& c) {
  read_bert_shape(f, c, 32768);
  auto q = std::make_shared<Settings>();
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_act").value_or("silu");
  c.layer_norm_eps = read_eps(f, "rms_norm_eps", 1e-6);
  q->kv_heads = optional_in(f, "num_key_value_heads", 1, kMaxHidden, c.num_attention_heads);
  if (c.num_attention_heads % q->kv_heads != 0) {
    throw f.fail("num_key_value_heads", fmt::format("is {}, which does not divide num_attention_heads {}",
                                                    q->kv_heads, c.num_attention_heads));
  }
  q->head_dim = optional_in(f, "head_dim", 2, kMaxHidden, c.hidden_size / c.num_attention_heads);
  if (q->head_dim % 2 != 0) throw f.fail("head_dim", "must be even (rotary turns pairs of values)");
  q->attention_bias = f.boolean("attention_bias").value_or(false);
  q->rope_theta = read_theta(f, "rope_theta", f.number("rope_theta").value_or(10000.0));
  require_default_rope_scaling(f);
  if (const auto params = f.object("rope_parameters")) {
    q->rope_theta = read_rope_parameters(f, *params, "every layer", q->rope_theta);
  }
  if (f.boolean("use_sliding_window").value_or(false)) {
    throw f.fail("use_sliding_window", "is true: Warden does not run Qwen3's sliding-window layers");
  }
  return q;
}

// Qwen3Model: pre-norm decoder layers with RMSNorms, causal attention of num_attention_heads
// query heads over num_key_value_heads key/value heads of head_dim, q_norm / k_norm on each head
// before rotary (rotate-half over the whole head, rope_theta), the SwiGLU MLP, no position
// table, no token types, the final norm.
void plan(const ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& q = settings_of<Settings>(config);
  EncoderDims& d = p.dims;
  p.names = kNames;
  d.pre_norm = true;
  d.rms_norm = true;
  d.qk_norm = true;
  d.causal = true;
  d.position_embeddings = false;
  d.type_vocab = 0;
  d.gated_ffn = true;
  d.kv_heads = q.kv_heads;
  d.head_dim = q.head_dim;
  d.rotary_dims = q.head_dim;
  d.rotary_base = q.rope_theta;
  p.biases = {q.attention_bias, false, false, false};
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
    .yes_no_reranker = true,
    .heads_divide_hidden = false,
};

}  // namespace warden::model::families

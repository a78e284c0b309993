#pragma once
// What the Llama-lineage decoders used as encoders share (Llama, Mistral, Qwen2, Qwen3):
// LlamaDecoderLayer's tensor names, their config keys for grouped-query heads and rotary
// positions, and their plan: pre-norm layers with RMSNorms, attention of num_attention_heads
// query heads over num_key_value_heads key/value heads, rotate-half rotary over the whole head,
// a SwiGLU MLP, no position table, no token types, a final norm.

#include <cstddef>
#include <string_view>
#include <vector>

#include "model/families/family.hpp"

namespace warden::model::families {

// LlamaDecoderLayer (and Qwen2's, Qwen3's): input_layernorm, self_attn.{q,k,v,o}_proj,
// post_attention_layernorm, mlp: down_proj(act(gate_proj(x)) · up_proj(x)); the model's
// embed_tokens (no embedding norm) and its final norm.
inline constexpr engine::LayerNames kDecoderLayerNames{.layer_prefix = "layers.",
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
                                                       .first_attn_norm = true};

// The decoder's settings a family's config reader fills and its plan reads.
struct DecoderSettings : FamilySettings {
  std::size_t kv_heads = 0;
  std::size_t head_dim = 0;
  double rope_theta = 10000.0;
  // A scaled rope's inverse frequencies (rope_scaling "linear" or "llama3"); empty: the default's.
  std::vector<float> rotary_inv_freq;
  bool causal = true;
};

// The keys their config classes share, with their defaults: BERT's shape keys (the table length
// `default_positions`), hidden_act (silu), rms_norm_eps (1e-6), num_key_value_heads (the query
// heads; must divide them), head_dim (hidden / heads; even), rope_theta, rope_scaling or
// rope_parameters ("default", "linear" or "llama3": ROPE_INIT_FUNCTIONS, which every decoder's
// rotary embedding calls; other types refused by name), is_causal (true unless said:
// transformers >= 5.2's create_causal_mask reads it from any config, and TEI honours it); and
// use_sliding_window true is refused naming `family` ("Qwen3"): the embedding and reranking
// checkpoints use no sliding window.
void read_decoder_config(const formats::json_fields::Fields& f, metadata::ModelConfig& c, DecoderSettings& s,
                         std::size_t default_positions, std::string_view family);

// num_key_value_heads (must divide the query heads) and head_dim (even: rotary turns pairs), with
// the config class's defaults; read_decoder_config's are the query heads and hidden / heads.
void read_decoder_heads(const formats::json_fields::Fields& f, const metadata::ModelConfig& c,
                        DecoderSettings& s, std::size_t default_kv_heads, std::size_t default_head_dim);

// The plan above from `s`, with kDecoderLayerNames and no biases; the family adds its own
// (q/k norms, attention biases).
void plan_decoder(const DecoderSettings& s, EncoderPlan& p);

}  // namespace warden::model::families

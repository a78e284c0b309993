#include "model/families/decoder.hpp"

#include <fmt/format.h>

#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

using namespace metadata::config_keys;

void read_decoder_config(const formats::json_fields::Fields& f, metadata::ModelConfig& c, DecoderSettings& s,
                         std::size_t default_positions, std::string_view family) {
  read_bert_shape(f, c, default_positions);
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_act").value_or("silu");
  c.layer_norm_eps = read_eps(f, "rms_norm_eps", 1e-6);
  s.kv_heads = optional_in(f, "num_key_value_heads", 1, kMaxHidden, c.num_attention_heads);
  if (c.num_attention_heads % s.kv_heads != 0) {
    throw f.fail("num_key_value_heads", fmt::format("is {}, which does not divide num_attention_heads {}",
                                                    s.kv_heads, c.num_attention_heads));
  }
  s.head_dim = optional_in(f, "head_dim", 2, kMaxHidden, c.hidden_size / c.num_attention_heads);
  if (s.head_dim % 2 != 0) throw f.fail("head_dim", "must be even (rotary turns pairs of values)");
  s.rope_theta = read_theta(f, "rope_theta", f.number("rope_theta").value_or(10000.0));
  require_default_rope_scaling(f);
  if (const auto params = f.object("rope_parameters")) {
    s.rope_theta = read_rope_parameters(f, *params, "every layer", s.rope_theta);
  }
  if (f.boolean("use_sliding_window").value_or(false)) {
    throw f.fail("use_sliding_window",
                 fmt::format("is true: Warden does not run {}'s sliding-window layers", family));
  }
}

void plan_decoder(const DecoderSettings& s, EncoderPlan& p) {
  engine::EncoderDims& d = p.dims;
  p.names = kDecoderLayerNames;
  d.pre_norm = true;
  d.rms_norm = true;
  d.causal = s.causal;
  d.position_embeddings = false;
  d.type_vocab = 0;
  d.gated_ffn = true;
  d.kv_heads = s.kv_heads;
  d.head_dim = s.head_dim;
  d.rotary_dims = s.head_dim;
  d.rotary_base = s.rope_theta;
  p.biases = {false, false, false, false};
}

}  // namespace warden::model::families

#include "model/families/decoder.hpp"

#include <cmath>

#include <fmt/format.h>

#include "kernels/rotary.hpp"

#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

using namespace metadata::config_keys;

namespace {

// A rope_scaling (or rope_parameters) entry's type and its inverse frequencies for heads of
// `dims` rotated values, as transformers' modeling_rope_utils computes them in float32:
// "linear" divides the default ones by factor; "llama3" (_compute_llama3_parameters) divides the
// low frequencies (wavelength above original_max_position_embeddings / low_freq_factor) by factor,
// keeps the high ones (below ... / high_freq_factor) and blends between.
std::vector<float> scaled_inv_freq(const formats::json_fields::Fields& f, std::string_view key,
                                   const simdjson::dom::object& entry, double theta, std::size_t dims) {
  const formats::json_fields::Fields e(entry, f.source());
  const std::string type = e.string("rope_type").value_or(e.string("type").value_or("default"));
  if (type == "default") return {};
  if (type != "linear" && type != "llama3") {
    throw f.fail(key, fmt::format("has type \"{}\"; supported: default, linear, llama3", type));
  }
  const auto positive = [&](std::string_view name) {
    const auto v = e.number(name);
    if (!v || !std::isfinite(*v) || *v <= 0.0) {
      throw f.fail(key, fmt::format("needs a positive {} for its type \"{}\"", name, type));
    }
    return static_cast<float>(*v);
  };
  std::vector<float> inv = kernels::rotary_inv_freq(theta, dims);
  const float factor = positive("factor");
  if (type == "linear") {
    for (float& v : inv) v /= factor;
    return inv;
  }
  const float low = positive("low_freq_factor");
  const float high = positive("high_freq_factor");
  const float old_context = positive("original_max_position_embeddings");
  if (high <= low) throw f.fail(key, "needs high_freq_factor above low_freq_factor");
  const float low_wavelen = old_context / low;
  const float high_wavelen = old_context / high;
  for (float& v : inv) {
    const float wavelen = static_cast<float>(2.0 * M_PI) / v;
    const float scaled = wavelen > low_wavelen ? v / factor : v;
    const float smooth = (old_context / wavelen - low) / (high - low);
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    v = medium ? (1.0F - smooth) * scaled / factor + smooth * scaled : scaled;
  }
  return inv;
}

}  // namespace

void read_decoder_config(const formats::json_fields::Fields& f, metadata::ModelConfig& c, DecoderSettings& s,
                         std::size_t default_positions, std::string_view family) {
  read_bert_shape(f, c, default_positions);
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_act").value_or("silu");
  c.layer_norm_eps = read_eps(f, "rms_norm_eps", 1e-6);
  read_decoder_heads(f, c, s, c.num_attention_heads, c.hidden_size / c.num_attention_heads);
  s.rope_theta = read_theta(f, "rope_theta", f.number("rope_theta").value_or(10000.0));
  if (const auto params = f.object("rope_parameters")) {
    const formats::json_fields::Fields p(*params, f.source());
    if (p.has("rope_theta"))
      s.rope_theta = read_theta(f, "rope_parameters", p.number("rope_theta").value_or(0.0));
    s.rotary_inv_freq = scaled_inv_freq(f, "rope_parameters", *params, s.rope_theta, s.head_dim);
  } else if (const auto scaling = f.object("rope_scaling")) {
    s.rotary_inv_freq = scaled_inv_freq(f, "rope_scaling", *scaling, s.rope_theta, s.head_dim);
  }
  s.causal = f.boolean("is_causal").value_or(true);
  if (f.boolean("use_sliding_window").value_or(false)) {
    throw f.fail("use_sliding_window",
                 fmt::format("is true: Warden does not run {}'s sliding-window layers", family));
  }
}

void read_decoder_heads(const formats::json_fields::Fields& f, const metadata::ModelConfig& c,
                        DecoderSettings& s, std::size_t default_kv_heads, std::size_t default_head_dim) {
  s.kv_heads = optional_in(f, "num_key_value_heads", 1, kMaxHidden, default_kv_heads);
  if (c.num_attention_heads % s.kv_heads != 0) {
    throw f.fail("num_key_value_heads", fmt::format("is {}, which does not divide num_attention_heads {}",
                                                    s.kv_heads, c.num_attention_heads));
  }
  s.head_dim = optional_in(f, "head_dim", 2, kMaxHidden, default_head_dim);
  if (s.head_dim % 2 != 0) throw f.fail("head_dim", "must be even (rotary turns pairs of values)");
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
  d.rotary_inv_freq = s.rotary_inv_freq;
  p.biases = {false, false, false, false};
}

}  // namespace warden::model::families

#include "model/metadata/config_keys.hpp"

#include <cmath>

#include <fmt/format.h>

namespace warden::model::metadata::config_keys {

using formats::json_fields::Fields;

std::size_t optional_in(const Fields& f, std::string_view key, std::int64_t min, std::int64_t max,
                        std::size_t fallback) {
  return f.has(key) ? static_cast<std::size_t>(f.integer_in(key, min, max)) : fallback;
}

double read_eps(const Fields& f, std::string_view key, double fallback) {
  const double eps = f.number(key).value_or(fallback);
  if (!std::isfinite(eps) || eps <= 0.0 || eps >= 1.0)
    throw f.fail(key, fmt::format("is {}, outside (0, 1)", eps));
  return eps;
}

double read_theta(const Fields& f, std::string_view key, double value) {
  if (!std::isfinite(value) || value <= 1.0) throw f.fail(key, "must be a number above 1");
  return value;
}

void read_bert_shape(const Fields& f, ModelConfig& c, std::size_t default_positions) {
  c.hidden_size = static_cast<std::size_t>(f.integer_in("hidden_size", 1, kMaxHidden));
  c.num_hidden_layers = static_cast<std::size_t>(f.integer_in("num_hidden_layers", 1, kMaxLayers));
  c.num_attention_heads = static_cast<std::size_t>(f.integer_in("num_attention_heads", 1, kMaxHidden));
  c.intermediate_size = static_cast<std::size_t>(f.integer_in("intermediate_size", 1, kMaxIntermediate));
  c.hidden_act = f.string("hidden_act").value_or("gelu");
  c.type_vocab_size = optional_in(f, "type_vocab_size", 0, kMaxTypeVocab, 2);
  c.position_embedding_type = f.string("position_embedding_type").value_or("absolute");
  c.layer_norm_eps = read_eps(f, "layer_norm_eps", c.layer_norm_eps);
  c.vocab_size = static_cast<std::size_t>(f.integer_in("vocab_size", 1, kMaxVocab));
  c.max_position_embeddings = optional_in(f, "max_position_embeddings", 1, kMaxPositions, default_positions);
}

void require_default_rope_scaling(const Fields& f) {
  if (const auto scaling = f.object("rope_scaling")) {
    const Fields s(*scaling, f.source());
    const std::string type = s.string("rope_type").value_or(s.string("type").value_or("default"));
    if (type != "default")
      throw f.fail("rope_scaling", fmt::format("has type \"{}\"; supported: default", type));
  }
}

double read_rope_parameters(const Fields& f, const simdjson::dom::object& entry, std::string_view layer_type,
                            double fallback) {
  const Fields e(entry, f.source());
  const std::string type = e.string("rope_type").value_or(e.string("type").value_or("default"));
  if (type != "default") {
    throw f.fail("rope_parameters",
                 fmt::format("gives {} the rope_type \"{}\"; supported: default", layer_type, type));
  }
  return e.has("rope_theta") ? read_theta(f, "rope_parameters", e.number("rope_theta").value_or(0.0))
                             : fallback;
}

}  // namespace warden::model::metadata::config_keys

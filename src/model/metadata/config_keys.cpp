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

std::optional<std::vector<bool>> read_sliding_layers(const Fields& f, std::size_t layers) {
  const auto types = f.array("layer_types");
  if (!types) return std::nullopt;
  std::vector<bool> sliding(layers, false);
  std::size_t i = 0;
  for (const auto v : *types) {
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS || (s != "full_attention" && s != "sliding_attention")) {
      throw f.fail("layer_types", "must hold \"full_attention\" or \"sliding_attention\" per layer");
    }
    if (i < layers) sliding[i] = s == "sliding_attention";
    ++i;
  }
  if (i != layers) throw f.fail("layer_types", fmt::format("lists {} layers; the model has {}", i, layers));
  return sliding;
}

void read_layer_type_rope_parameters(const Fields& f, double& full, double& sliding) {
  const auto params = f.object("rope_parameters");
  if (!params) return;
  for (const auto field : *params) {
    const std::string_view key = field.key;
    if (key != "full_attention" && key != "sliding_attention") {
      throw f.fail("rope_parameters",
                   fmt::format("has \"{}\"; the layer types are full_attention and sliding_attention", key));
    }
    if (field.value.is_null()) continue;
    simdjson::dom::object entry;
    if (field.value.get_object().get(entry) != simdjson::SUCCESS) {
      throw f.fail("rope_parameters", fmt::format("entry \"{}\" is not an object", key));
    }
    double& theta = key == "full_attention" ? full : sliding;
    theta = read_rope_parameters(f, entry, key, theta);
  }
}

}  // namespace warden::model::metadata::config_keys

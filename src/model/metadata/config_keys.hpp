#pragma once
// The config.json readers every family shares: bounds no real encoder comes near (low enough
// that products of them cannot overflow and that a hostile file cannot make the loader reserve
// absurd memory), BERT's shape keys, norm epsilons and rotary thetas. Each reader throws
// Error(CorruptFile) naming the file and the key.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "model/formats/json_fields.hpp"
#include "model/metadata/config.hpp"

namespace warden::model::metadata::config_keys {

inline constexpr std::int64_t kMaxHidden = 1 << 16;
inline constexpr std::int64_t kMaxLayers = 1 << 10;
inline constexpr std::int64_t kMaxIntermediate = 1 << 20;
inline constexpr std::int64_t kMaxVocab = 1 << 24;
inline constexpr std::int64_t kMaxPositions = 1 << 20;
inline constexpr std::int64_t kMaxTypeVocab = 1 << 16;

// `key` in [min, max] when present, else `fallback`.
std::size_t optional_in(const formats::json_fields::Fields& f, std::string_view key, std::int64_t min,
                        std::int64_t max, std::size_t fallback);
// A norm's epsilon under `key` (absent or null: `fallback`), in (0, 1).
double read_eps(const formats::json_fields::Fields& f, std::string_view key, double fallback);
// A rotary theta: a finite number above 1.
double read_theta(const formats::json_fields::Fields& f, std::string_view key, double value);

// BERT's shape keys (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
// hidden_act, type_vocab_size, position_embedding_type, layer_norm_eps, vocab_size,
// max_position_embeddings), with BertConfig's defaults but for the table length, whose default
// is the config class's `default_positions`.
void read_bert_shape(const formats::json_fields::Fields& f, ModelConfig& c,
                     std::size_t default_positions = 512);

// A rope_scaling that scales nothing (absent, null, or of type "default"): Error naming the key
// for another type (yarn, linear, dynamic, ...), which Warden does not run.
void require_default_rope_scaling(const formats::json_fields::Fields& f);
// One layer type's entry of rope_parameters ({"rope_type": "default", "rope_theta": ...}): its
// theta, or `fallback` when it names none. Scaled rotary types are refused.
double read_rope_parameters(const formats::json_fields::Fields& f, const simdjson::dom::object& entry,
                            std::string_view layer_type, double fallback);

// layer_types (ModernBERT, Gemma3): per layer, whether it is "sliding_attention" rather than
// "full_attention"; nullopt when the key is absent. One entry per layer or Error.
std::optional<std::vector<bool>> read_sliding_layers(const formats::json_fields::Fields& f,
                                                     std::size_t layers);
// rope_parameters keyed by layer type ({"full_attention": {...}, "sliding_attention": {...}}, as
// transformers >= 5 saves them): each entry's theta into `full` or `sliding` (left as they are
// where an entry names none or is null). Another key or a scaled type is Error.
void read_layer_type_rope_parameters(const formats::json_fields::Fields& f, double& full, double& sliding);

}  // namespace warden::model::metadata::config_keys

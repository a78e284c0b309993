#pragma once
// HuggingFace config.json, reduced to what an encoder engine needs, as one typed struct: the
// keys every family has, plus what the config's family read for itself (family_settings).
//
// BERT-style names (hidden_size, num_hidden_layers, ...) are read unless the family names its
// shape otherwise (DistilBERT's dim, n_layers, n_heads, hidden_dim, activation,
// sinusoidal_pos_embds; NomicBERT's GPT-2 names), mapped onto the same fields. The shape fields are required;
// the others default as the transformers config class does when a key is absent (so a
// file that transformers loads loads here too). Every value is type-checked and bounded
// (positive sizes, hidden divisible by heads, sane upper limits), and a bad one is
// Error(CorruptFile) naming the file and the key, never a crash. Unknown keys are ignored.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::model::families {
struct FamilySettings;
}
namespace warden::model::formats::json_fields {
class Fields;
}

namespace warden::model::metadata {

// A task adapter a config names (jina-embeddings-v3's lora_adaptations) and the instruction its
// remote code prepends to a text encoded for that task (task_instructions; may be empty).
struct TaskAdapter {
  std::string name;
  std::string instruction;
};

struct ModelConfig {
  std::vector<std::string> architectures;  // e.g. {"BertModel"}; may be empty
  std::string model_type;                  // "bert", "xlm-roberta", "roberta", "distilbert", ...
  std::size_t hidden_size = 0;
  std::size_t num_hidden_layers = 0;
  std::size_t num_attention_heads = 0;
  std::size_t intermediate_size = 0;
  std::string hidden_act = "gelu";
  double layer_norm_eps = 1e-12;
  std::size_t max_position_embeddings = 512;
  std::size_t type_vocab_size = 2;  // 0 for DistilBERT, which has no token types
  std::size_t vocab_size = 0;
  std::optional<std::int64_t> pad_token_id;
  std::string position_embedding_type = "absolute";
  // The class of auto_map's "AutoConfig" (the remote code a trust_remote_code load runs, e.g.
  // "XLMRobertaFlashConfig"), without its module path; empty when the config names none.
  std::string remote_config;
  bool sinusoidal_pos_embds = false;  // DistilBERT only
  std::optional<std::string> torch_dtype;
  // Class names by id (dense, 0..n-1). transformers' default when the file says nothing is
  // two labels, LABEL_0 and LABEL_1; so it is here.
  std::vector<std::string> id2label;
  // The task adapters its family read (model/engine/lora.hpp), by index; empty: none.
  std::vector<TaskAdapter> task_adapters;
  // What only the config's family reads (model/families/family.hpp), or null.
  std::shared_ptr<const families::FamilySettings> family_settings;
  std::map<std::string, std::int64_t> label2id;

  [[nodiscard]] std::size_t num_labels() const noexcept { return id2label.size(); }
  [[nodiscard]] std::size_t head_dim() const noexcept { return hidden_size / num_attention_heads; }
};

namespace json_fields = formats::json_fields;

// The keys that say which family reads the rest: model_type (required), architectures,
// torch_dtype (or dtype), position_embedding_type (what tells a JinaBERT config from BERT's) and
// auto_map's AutoConfig (what tells jina-embeddings-v3's XLMRobertaModel from XLM-R's).
void read_config_identity(const formats::json_fields::Fields& f, ModelConfig& c);
// After the family's keys: pad_token_id (checked against the vocabulary; else the family's
// default, and room in the table for positions that start after it) and the labels.
void read_config_padding_and_labels(const formats::json_fields::Fields& f, ModelConfig& c,
                                    std::optional<std::int64_t> default_pad_token_id,
                                    bool positions_after_pad);

// parse_model_config and read_model_config, which dispatch to the families, are in
// model/families/registry.hpp.

}  // namespace warden::model::metadata

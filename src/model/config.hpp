#pragma once
// HuggingFace config.json, reduced to what an encoder engine needs, as one typed struct.
//
// BERT-style names (hidden_size, num_hidden_layers, ...) are read for every model type;
// DistilBERT's own names (dim, n_layers, n_heads, hidden_dim, activation,
// sinusoidal_pos_embds) are mapped onto the same fields. The shape fields are required;
// the others default as the transformers config class does when a key is absent (so a
// file that transformers loads loads here too). Every value is type-checked and bounded
// (positive sizes, hidden divisible by heads, sane upper limits), and a bad one is
// Error(CorruptFile) naming the file and the key, never a crash. Unknown keys are ignored.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden {

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
  bool sinusoidal_pos_embds = false;  // DistilBERT only
  std::optional<std::string> torch_dtype;
  // Class names by id (dense, 0..n-1). transformers' default when the file says nothing is
  // two labels, LABEL_0 and LABEL_1; so it is here.
  std::vector<std::string> id2label;
  // DeBERTa-v2/v3 (model_type "deberta-v2"), with DebertaV2Config's defaults.
  struct Deberta {
    bool relative_attention = false;
    std::int64_t max_relative_positions = -1;  // < 1: max_position_embeddings
    std::int64_t position_buckets = -1;        // <= 0: distances are not log-bucketed
    bool c2p = false;                          // pos_att_type holds "c2p"
    bool p2c = false;                          // ... "p2c"
    bool share_att_key = false;                // c2p/p2c project with the layer's key/query weights
    bool norm_rel_ebd = false;                 // "layer_norm" in norm_rel_ebd: the table is LayerNormed once
    bool position_biased_input = true;
    std::string pooler_hidden_act = "gelu";
  };
  Deberta deberta;
  // JinaBERT (the remote-code JinaBertConfig: model_type "bert", position_embedding_type
  // "alibi"): "original" is BERT's feed-forward, "geglu"/"reglu" a gated one.
  std::string feed_forward_type = "original";
  // MPNet: rows of encoder.relative_attention_bias (MPNetConfig's default 32; the bucketing
  // itself always uses 32, whatever this says).
  std::size_t relative_attention_num_buckets = 32;
  // Rotary position embeddings (NomicBERT): the base, the fraction of each head rotated (0:
  // none), rotate-half or interleaved pairs, and NomicBERT's dynamic NTK scaling, which raises
  // the base for a sequence longer than max_trained_positions.
  struct Rotary {
    double base = 10000.0;
    double fraction = 0.0;
    bool interleaved = false;
    std::optional<double> scaling_factor;
    std::size_t max_trained_positions = 2048;
    // GTE's rope_scaling {"type": "ntk", "factor": f}: fixed NTK scaling at every length.
    std::optional<double> fixed_ntk_factor;
  };
  Rotary rotary;
  // NomicBERT (model_type "nomic_bert", GPT-2-style keys): which nn.Linear layers have biases.
  struct Nomic {
    bool qkv_proj_bias = true;  // Wqkv and out_proj
    bool mlp_fc1_bias = true;   // fc11/fc12 (or fc1)
    bool mlp_fc2_bias = true;
  };
  Nomic nomic;
  // GTE (model_type "new"): Q, K and V in one qkv_proj (pack_qkv) or q_proj/k_proj/v_proj.
  bool gte_packed_qkv = true;
  // ModernBERT (model_type "modernbert"), with ModernBertConfig's defaults. Layer l attends
  // within |i - j| <= local_attention / 2 unless l % global_every == 0 (ModernBertAttention);
  // it rotates with local_rope_theta when sliding_rope[l] (layer_types, which default to the
  // same pattern), else global_rope_theta.
  struct ModernBert {
    std::size_t local_attention = 128;
    std::size_t global_every = 3;
    std::vector<bool> sliding_rope;
    double global_rope_theta = 160000.0;
    double local_rope_theta = 10000.0;
    bool norm_bias = false;
    bool attention_bias = false;
    bool mlp_bias = false;
    bool classifier_bias = false;
    std::string classifier_pooling = "cls";  // or "mean"
    std::string classifier_activation = "gelu";
  };
  ModernBert modernbert;
  // Qwen3 (model_type "qwen3", Qwen3Config's defaults): kv_heads key/value heads shared by
  // consecutive query heads, heads of head_dim values (wider than hidden / heads in the real
  // models), biases on the attention projections or not, and an LM head tied to the word
  // embeddings or its own lm_head. rms_norm_eps is read into layer_norm_eps, rope_theta into
  // rotary.base.
  struct Qwen3 {
    std::size_t kv_heads = 0;
    std::size_t head_dim = 0;
    bool attention_bias = false;
    bool tie_word_embeddings = false;
  };
  Qwen3 qwen3;
  std::map<std::string, std::int64_t> label2id;

  [[nodiscard]] std::size_t num_labels() const noexcept { return id2label.size(); }
  [[nodiscard]] std::size_t head_dim() const noexcept { return hidden_size / num_attention_heads; }
};

// Parses config.json text; `source` names the file in errors.
ModelConfig parse_model_config(std::string_view json, std::string_view source);
// Reads and parses a config.json file (Error(NotFound) when it does not exist).
ModelConfig read_model_config(const std::filesystem::path& path);

}  // namespace warden

#pragma once
// Reading an encoder's weights from a checkpoint into EncoderWeights, whatever the family: how
// the family names a layer's tensors (LayerNames), which of its linear layers have biases
// (LayerBiases) and DeBERTa's relative table (RelativeSpec). The dense layers are packed in the
// model's precision into one arena, each layer into its own part, so that a packed image of
// them (model/engine/packed_image.hpp) can be saved and mapped back.

#include <cstddef>
#include <string>
#include <string_view>

#include "core/cpu_features.hpp"
#include "core/precision.hpp"
#include "model/engine/encoder.hpp"
#include "model/formats/weights.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::engine {

// How a checkpoint names one encoder layer's tensors (after "<layer prefix><i>.").
struct LayerNames {
  std::string_view layer_prefix;
  std::string_view q, k, v, attn_out, attn_norm, ffn_in, ffn_out, ffn_norm;
  // When EncoderDims::gated_ffn: [2·intermediate x hidden] holding the activated rows, then the
  // gate rows; or, with ffn_gate set, the activated rows alone, ffn_gate the gate rows.
  std::string_view ffn_gated = {};
  std::string_view ffn_gate = {};
  std::string_view embedding_norm = "embeddings.LayerNorm";  // empty: none (a decoder's)
  bool gate_first = false;  // ffn_gated holds [gate | activated] (GTE's up_gate_proj: [up | gate], act(gate))
  // q alone names Q, K and V stacked in one [3·hidden x hidden] tensor when k is empty.
  std::string_view word_embeddings = "embeddings.word_embeddings.weight";
  // Pre-LN encoders: the norm after the last layer, and whether layer 0 has an attn_norm
  // (ModernBERT's is an identity, and its checkpoints hold none).
  std::string_view final_norm = {};
  bool first_attn_norm = true;
  // Qwen3's per-head query and key RMSNorms (EncoderDims::qk_norm).
  std::string_view q_norm = {};
  std::string_view k_norm = {};
  // Gemma's norms of the attention's and the FFN's outputs (empty: none).
  std::string_view post_attn_norm = {};
  std::string_view post_ffn_norm = {};
  // Gemma stores every RMSNorm weight as an offset from one (its norm scales by 1 + weight).
  bool norm_weights_from_one = false;
  // A mixture-of-experts layer's router ("<base>.weight" [experts x hidden]), its experts'
  // stacked input and output matrices (tensors themselves: [experts·intermediate x hidden] each)
  // and their shared output bias ([hidden]); read in the layers EncoderDims::moe_layers marks.
  std::string_view moe_router = {};
  std::string_view moe_up = {};
  std::string_view moe_down = {};
  std::string_view moe_bias = {};
};

// Which of a layer's nn.Linear modules have biases (NomicBERT's are configurable).
struct LayerBiases {
  bool attention = true;  // the QKV projection and (unless attention_out_unbiased) the attention output
  bool ffn_in = true;
  bool ffn_out = true;
  bool norms = true;                    // every LayerNorm's beta (ModernBERT's norm_bias)
  bool attention_out_unbiased = false;  // Qwen2: biases on q/k/v, none on o_proj
};

// DeBERTa's relative table, as read_encoder packs it for each layer: encoder.rel_embeddings
// ([table_rows x hidden]), LayerNormed once with encoder.LayerNorm when norm_rel_ebd says so
// (DebertaV2Encoder.get_rel_embedding), then projected by each layer's key (c2p) and query
// (p2c) weights and biases with share_att_key, else by its pos_key_proj / pos_query_proj
// (DisentangledSelfAttention.disentangled_attention_bias), and cut into one packed
// [table_rows x head_dim] slice per head, which the attention multiplies that head's queries
// or keys by. They live in the layer's part of the arena, so a packed image holds them too.
struct RelativeSpec {
  std::size_t table_rows = 0;  // 0: no relative terms
  bool norm = false;
  bool shared = false;
};

// The encoder weights of `weights` under `prefix`, named by `names`, for `dims`, in `precision`
// for `isa` (the layers loaded on `pool` when given). Error(CorruptFile) names a missing or
// mis-shaped tensor.
EncoderWeights read_encoder(const formats::ModelWeights& weights, const std::string& prefix, Isa isa,
                            Precision precision, const EncoderDims& d, const LayerNames& names,
                            const RelativeSpec& relative, const LayerBiases& biases, ThreadPool* pool);

}  // namespace warden::model::engine

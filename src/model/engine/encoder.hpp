#pragma once
// The transformer encoder shared by BERT, RoBERTa/XLM-R, DistilBERT, DeBERTa-v2, JinaBERT,
// MPNet, NomicBERT, GTE and ModernBERT: embeddings, then blocks of attention and FFN, each
// with a residual and a LayerNorm. The architectures differ in how their checkpoints name and
// shape these weights, how position ids are counted, which terms the attention scores add
// (relative, ALiBi or bucketed distance biases, rotary positions, sliding windows) and where
// the LayerNorms sit; model/encoder_model.cpp translates.
//
// Execution plan per layer, over the packed token matrix X [tokens x hidden] (post-LN):
//   QKV = X·Wqkvᵀ + b            one GEMM for the three projections
//   CTX = attention(QKV)          per (sequence, head), no padding
//   X   = LN(CTX·Woᵀ + b + X)     residual fused into the GEMM epilogue
//   H   = gelu(X·W1ᵀ + b1)        activation fused into the GEMM epilogue (or, for gated
//                                 FFNs, act(X·Waᵀ) ⊙ (X·Wgᵀ), kernels/gated_dense.hpp)
//   X   = LN(H·W2ᵀ + b2 + X)
// (A mixture-of-experts layer replaces the FFN's two GEMMs by its experts': moe_ffn.hpp.)
// Pre-LN (ModernBERT) normalises each sublayer's input instead and keeps X the residual
// stream: QKV = LN(X)·Wqkvᵀ, X = CTX·Woᵀ + X, H = act(LN(X)·W1ᵀ), X = H·W2ᵀ + X, and one
// final LN after the last layer. Gemma normalises the sublayers' outputs too:
// X = LN'(CTX·Woᵀ) + X, X = LN'(H·W2ᵀ) + X.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/arena.hpp"
#include "kernels/activation.hpp"
#include "kernels/attention.hpp"
#include "kernels/dense.hpp"
#include "kernels/gated_dense.hpp"
#include "kernels/rotary.hpp"
#include "model/engine/embedding_table.hpp"
#include "model/engine/layer_norm_weights.hpp"
#include "model/engine/lora.hpp"
#include "model/engine/moe_ffn.hpp"
#include "model/engine/packed_image.hpp"
#include "model/engine/token_batch.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::engine {

struct EncoderDims {
  std::size_t hidden = 0;
  std::size_t layers = 0;
  std::size_t heads = 0;
  std::size_t intermediate = 0;
  std::size_t vocab = 0;
  std::size_t max_positions = 0;
  std::size_t type_vocab = 0;       // 0: the model has no token type embeddings
  std::size_t position_offset = 0;  // first position id (RoBERTa: padding_idx + 1)
  // RoBERTa/XLM-R/MPNet number positions over the non-padding tokens only (HF's
  // create_position_ids_from_input_ids): a token whose id is padding_idx (a literal <pad> in
  // the text) gets position padding_idx and does not advance the count. Unset: every token
  // advances it.
  std::optional<std::uint32_t> padding_idx;
  float layer_norm_eps = 1e-12F;
  kernels::Activation ffn_activation = kernels::Activation::Gelu;
  bool position_embeddings = true;  // false: no absolute position table (DeBERTa-v3)
  // DeBERTa's disentangled attention: the terms the scores add (each also widens the
  // scale to 1/sqrt(head_dim · (1 + c2p + p2c)), as upstream does even without relative
  // attention), and the table row of each distance r = i - j at relative_rows[r +
  // max_positions - 1] (empty: no relative terms).
  bool c2p = false;
  bool p2c = false;
  std::vector<std::int32_t> relative_rows;
  // ALiBi (JinaBERT): per head, the slope of the -slope·|i - j| bias added to the scores
  // (empty: none); the encoder turns them into its distance bias.
  std::vector<float> alibi_slopes;
  // A gated feed-forward (JinaBERT's GEGLU/ReGLU): the FFN's input layer is EncoderLayer::
  // ffn_gated, giving ffn_activation(first half) ⊙ second half.
  bool gated_ffn = false;
  // Rotary positions (NomicBERT): the first rotary_dims values of every query and key head
  // turn by position · inv_freq (kernels/rotary.hpp), with inverse frequencies from
  // rotary_base; rotary_ntk_factor (NomicBERT's dynamic NTK) raises the base for a sequence
  // longer than rotary_max_trained tokens. rotary_dims 0: none.
  std::size_t rotary_dims = 0;
  double rotary_base = 10000.0;
  bool rotary_interleaved = false;
  std::optional<double> rotary_ntk_factor;
  std::size_t rotary_max_trained = 0;
  // The inverse frequencies when the model fixes them otherwise (GTE's NTK rope_scaling);
  // empty: kernels::rotary_inv_freq(rotary_base, rotary_dims).
  std::vector<float> rotary_inv_freq;
  // Pre-LN blocks (ModernBERT): see the plan above. EncoderLayer::attn_norm and ffn_norm
  // normalise the sublayers' inputs (an empty attn_norm is the identity), and
  // EncoderWeights::final_norm follows the last layer.
  bool pre_norm = false;
  // Sliding-window attention (ModernBERT's local layers): layer l attends only |i - j| <=
  // attention_window when windowed_layers[l] (empty: no layer is windowed).
  std::size_t attention_window = 0;
  std::vector<bool> windowed_layers;
  // A second rotary base for the layers marked in local_rotary_layers (ModernBERT's local
  // layers rotate with local_rotary_base, the global ones with rotary_base).
  std::vector<bool> local_rotary_layers;
  double local_rotary_base = 10000.0;
  // Decoders used as encoders (Qwen3): heads of head_dim values (0: hidden / heads; Qwen3's are
  // wider), kv_heads key/value heads each shared by heads / kv_heads consecutive query heads
  // (0: as many as the queries), causal attention, RMSNorms in place of the LayerNorms (gamma
  // only), and the per-head RMSNorm of queries and keys before rotary (EncoderLayer::q_norm,
  // k_norm) that Qwen3 adds.
  std::size_t head_dim = 0;
  std::size_t kv_heads = 0;
  bool causal = false;
  bool rms_norm = false;
  bool qk_norm = false;
  // Gemma: the word embeddings multiplied by embedding_scale (sqrt(hidden)), the scores by
  // attention_scale (query_pre_attn_scalar^-0.5; unset: 1/sqrt(head_dim)), and each sublayer's
  // output normalised (EncoderLayer::post_attn_norm, post_ffn_norm) before the residual add.
  float embedding_scale = 1.0F;
  std::optional<float> attention_scale;
  // Mixture-of-experts feed-forwards (nomic-embed-text-v2-moe): in the layers marked in
  // moe_layers each token goes through moe_top_k of `experts` experts of `intermediate` width
  // (EncoderLayer::moe, model/engine/moe_ffn.hpp) in place of the FFN. Empty: no such layer.
  std::vector<bool> moe_layers;
  std::size_t experts = 0;
  std::size_t moe_top_k = 0;

  [[nodiscard]] std::size_t head_size() const noexcept { return head_dim != 0 ? head_dim : hidden / heads; }
  [[nodiscard]] std::size_t kv_head_count() const noexcept { return kv_heads != 0 ? kv_heads : heads; }
  // Columns of the packed QKV matrix: the queries', then the keys' and the values'.
  [[nodiscard]] std::size_t qkv_width() const noexcept { return (heads + 2 * kv_head_count()) * head_size(); }
};

// The dense layers are in the model's precision (float32, bfloat16 or int8); LayerNorm (or RMSNorm),
// attention and the embeddings' sums always run in float32.
struct EncoderLayer {
  kernels::DenseLayer qkv;       // [qkv_width x hidden]: Q, K, V stacked (3·hidden rows without GQA)
  kernels::DenseLayer attn_out;  // [hidden x heads·head_dim]
  LayerNormWeights attn_norm;
  LayerNormWeights q_norm, k_norm;  // qk_norm: each head's RMSNorm weights ([head_dim], no beta)
  kernels::DenseLayer ffn_in;       // [intermediate x hidden] (empty when the FFN is gated)
  kernels::GatedDense ffn_gated;    // [intermediate x hidden], two halves (gated FFNs only)
  kernels::DenseLayer ffn_out;      // [hidden x intermediate]
  LayerNormWeights ffn_norm;
  // Gemma's norms of the sublayers' outputs (empty: none).
  LayerNormWeights post_attn_norm, post_ffn_norm;
  // DeBERTa: the relative embedding table projected by this layer's key (c2p) and query
  // (p2c) weights, one packed [table rows x head_dim] slice per head; empty when unused.
  std::vector<kernels::PackedLinear> pos_key;
  std::vector<kernels::PackedLinear> pos_query;
  MoeFfn moe;  // a mixture-of-experts layer's FFN (ffn_in and ffn_out are then empty)
  // Task adapters of the four dense layers (lora.hpp; empty: none).
  LoraLinear qkv_lora, attn_out_lora, ffn_in_lora, ffn_out_lora;
};

struct EncoderWeights {
  // Holds the dense layers' data (declared first: destroyed after the layers), packed at
  // load or mapped from a packed image (model/engine/packed_image.hpp).
  std::unique_ptr<Arena> arena;
  PackedImageUse packed_image = PackedImageUse::Off;
  std::string packed_image_note;         // NotSaved: why
  EmbeddingTable word_embeddings;        // vocab x hidden, in the model's precision
  EmbeddingTable position_embeddings;    // max_positions x hidden, float32
  EmbeddingTable token_type_embeddings;  // type_vocab x hidden (float32), or empty
  LayerNormWeights embedding_norm;
  std::vector<EncoderLayer> layers;
  LayerNormWeights final_norm;  // pre-LN encoders only
  // A per-head bias of the key-query distance, added to every layer's scores (empty: none).
  kernels::DistanceBias distance_bias;
  // Task adapters (lora.hpp): how many tasks a sequence may name (0: none), and those of the word
  // and token type tables (the layers' are in EncoderLayer).
  std::size_t adapters = 0;
  LoraTable word_lora, type_lora;
};

// Scratch buffers of one forward pass. Reused across calls: they grow to the largest
// batch seen and are never shrunk, so the steady state allocates nothing.
class EncoderWorkspace {
 public:
  float* hidden(std::size_t floats) { return ensure(hidden_, floats); }
  float* qkv(std::size_t floats) { return ensure(qkv_, floats); }
  float* context(std::size_t floats) { return ensure(context_, floats); }
  float* ffn(std::size_t floats) { return ensure(ffn_, floats); }
  float* row(std::size_t floats) { return ensure(row_, floats); }    // one widened embedding row
  float* lora(std::size_t floats) { return ensure(lora_, floats); }  // a low-rank product's rows
  MoeScratch& moe() noexcept { return moe_; }
  // The rotary table of `inv_freq` for at least `positions` positions (rebuilt when longer).
  // The two most recently used tables are kept (a model may rotate with two bases), and a
  // reference stays valid until tables of two other bases were asked for.
  const kernels::RotaryTable& rotary(std::span<const float> inv_freq, std::size_t positions);

 private:
  struct CachedRotary {
    kernels::RotaryTable table;
    std::vector<float> inv_freq;  // what the table was built from (workspaces are shared by models)
    std::size_t last_use = 0;
  };
  std::array<CachedRotary, 2> rotary_;
  std::size_t rotary_uses_ = 0;
  static float* ensure(AlignedBuffer<float>& buffer, std::size_t floats);
  AlignedBuffer<float> hidden_, qkv_, context_, ffn_, row_, lora_;
  MoeScratch moe_;
};

class Encoder {
 public:
  Encoder(const EncoderDims& dims, EncoderWeights weights);

  [[nodiscard]] const EncoderDims& dims() const noexcept { return dims_; }
  // The precision of the dense layers (all layers share one).
  [[nodiscard]] Precision precision() const noexcept;

  // Checks ids, type ids and lengths against the model; throws Error(InvalidInput).
  void validate(const TokenBatch& batch) const;

  // Last hidden states, [batch.tokens() x hidden] row-major, living in `ws` until its
  // next use. Call validate() first (forward() assumes a valid batch).
  std::span<const float> forward(const TokenBatch& batch, EncoderWorkspace& ws, ThreadPool* pool) const;

  // Bytes of weights held (packed, plain, and the embedding tables wherever they live).
  [[nodiscard]] std::size_t weight_bytes() const noexcept;
  // Bytes of the layers alone (dense weights, biases, norms): what every forward pass reads
  // whole, whatever its tokens (of the embedding tables it reads only the rows it uses).
  [[nodiscard]] std::size_t layer_bytes() const noexcept;
  // Whether the dense layers came from a packed image, and why none was saved if not.
  [[nodiscard]] PackedImageUse packed_image() const noexcept { return w_.packed_image; }
  [[nodiscard]] const std::string& packed_image_note() const noexcept { return w_.packed_image_note; }

 private:
  void embed(const TokenBatch& batch, float* x, float* scratch) const;
  // Adds each token's embedding adapters (EncoderWeights::word_lora, type_lora) to its row of x.
  void embed_adapters(const TokenBatch& batch, float* x) const;
  // One rotary table per sequence of the batch: the workspace's for `inv_freq`, or, for a
  // sequence past rotary_max_trained with NTK scaling, its own (kept in `scaled`).
  std::vector<const kernels::RotaryTable*> rotary_tables(const TokenBatch& batch, EncoderWorkspace& ws,
                                                         std::span<const float> inv_freq,
                                                         std::vector<kernels::RotaryTable>& scaled) const;

  EncoderDims dims_;
  std::vector<float> rotary_inv_freq_;        // for rotary_base
  std::vector<float> local_rotary_inv_freq_;  // for local_rotary_base, when some layer uses it
  EncoderWeights w_;
};

}  // namespace warden::model::engine

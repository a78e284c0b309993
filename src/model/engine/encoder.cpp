#include "model/engine/encoder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/attention.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/relative_attention.hpp"
#include "kernels/rms_norm.hpp"

namespace warden::model::engine {

const kernels::RotaryTable& EncoderWorkspace::rotary(std::span<const float> inv_freq, std::size_t positions) {
  auto same = [&](const CachedRotary& c) {
    return std::equal(inv_freq.begin(), inv_freq.end(), c.inv_freq.begin(), c.inv_freq.end());
  };
  CachedRotary* slot = nullptr;
  for (CachedRotary& c : rotary_) {
    if (same(c)) slot = &c;
  }
  if (slot == nullptr) {  // replace the least recently used
    slot = rotary_[0].last_use <= rotary_[1].last_use ? &rotary_[0] : &rotary_[1];
    slot->table = {};
    slot->inv_freq.assign(inv_freq.begin(), inv_freq.end());
  }
  if (slot->table.positions() < positions || slot->table.positions() == 0) {
    slot->table = kernels::RotaryTable::make(inv_freq, positions);
  }
  slot->last_use = ++rotary_uses_;
  return slot->table;
}

float* EncoderWorkspace::ensure(AlignedBuffer<float>& buffer, std::size_t floats) {
  if (buffer.size() < floats) buffer = AlignedBuffer<float>(floats);
  return buffer.data();
}

Encoder::Encoder(const EncoderDims& dims, EncoderWeights weights) : dims_(dims), w_(std::move(weights)) {
  const std::size_t h = dims_.hidden;
  if (h == 0 || dims_.heads == 0 || (dims_.head_dim == 0 && h % dims_.heads != 0)) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("hidden size {} is not a multiple of {} heads", h, dims_.heads));
  }
  if (dims_.heads % dims_.kv_head_count() != 0) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{} attention heads are not a multiple of {} key/value heads", dims_.heads,
                            dims_.kv_head_count()));
  }
  if (dims_.kv_heads != 0 && !dims_.relative_rows.empty()) {
    throw Error(ErrorKind::Internal, "Encoder: relative attention with grouped key/value heads");
  }
  auto table_ok = [h](const EmbeddingTable& t, std::size_t rows) {
    return t.rows() == rows && (rows == 0 || t.width() == h);
  };
  if (!table_ok(w_.word_embeddings, dims_.vocab) ||
      !table_ok(w_.position_embeddings, dims_.position_embeddings ? dims_.max_positions : 0) ||
      !table_ok(w_.token_type_embeddings, dims_.type_vocab) || w_.layers.size() != dims_.layers ||
      // embed() widens only word rows into its scratch row
      w_.position_embeddings.precision() != Precision::Float32 ||
      w_.token_type_embeddings.precision() != Precision::Float32) {
    throw Error(ErrorKind::Internal, "Encoder: weights do not match the dimensions");
  }
  if (dims_.embedding_scale != 1.0F && (dims_.position_embeddings || dims_.type_vocab > 0)) {
    // embed() scales the word row alone, which is the whole embedding only without these tables.
    throw Error(ErrorKind::Internal, "Encoder: an embedding scale with position or token-type tables");
  }
  if (!dims_.alibi_slopes.empty()) {
    if (dims_.alibi_slopes.size() != dims_.heads) {
      throw Error(ErrorKind::Internal, "Encoder: one ALiBi slope per head is needed");
    }
    w_.distance_bias = kernels::DistanceBias::alibi(dims_.alibi_slopes, dims_.max_positions - 1);
  }
  if (!w_.distance_bias.empty() && (w_.distance_bias.heads() != dims_.heads ||
                                    w_.distance_bias.max_distance() + 1 < dims_.max_positions)) {
    throw Error(ErrorKind::Internal, "Encoder: the distance bias does not match the dimensions");
  }
  if (dims_.rotary_dims > 0) {
    if (dims_.rotary_dims % 2 != 0 || dims_.rotary_dims > dims_.head_size()) {
      throw Error(ErrorKind::CorruptFile, fmt::format("{} rotary dimensions do not fit heads of {}",
                                                      dims_.rotary_dims, dims_.head_size()));
    }
    rotary_inv_freq_ = dims_.rotary_inv_freq.empty()
                           ? kernels::rotary_inv_freq(dims_.rotary_base, dims_.rotary_dims)
                           : dims_.rotary_inv_freq;
    if (rotary_inv_freq_.size() != dims_.rotary_dims / 2) {
      throw Error(ErrorKind::Internal, "Encoder: one inverse frequency per rotated pair is needed");
    }
    if (std::find(dims_.local_rotary_layers.begin(), dims_.local_rotary_layers.end(), true) !=
        dims_.local_rotary_layers.end()) {
      local_rotary_inv_freq_ = kernels::rotary_inv_freq(dims_.local_rotary_base, dims_.rotary_dims);
    }
  }
  const auto per_layer = [this](const std::vector<bool>& v) { return v.empty() || v.size() == dims_.layers; };
  if (!per_layer(dims_.windowed_layers) || !per_layer(dims_.local_rotary_layers) ||
      (!dims_.windowed_layers.empty() && dims_.attention_window == 0)) {
    throw Error(ErrorKind::Internal, "Encoder: the per-layer attention settings do not match the layers");
  }
  if (!per_layer(dims_.moe_layers) || (!dims_.moe_layers.empty() && (dims_.gated_ffn || dims_.pre_norm))) {
    throw Error(ErrorKind::Internal, "Encoder: the mixture-of-experts layers do not match the layers");
  }
  for (std::size_t l = 0; l < w_.layers.size(); ++l) {
    const EncoderLayer& layer = w_.layers[l];
    const bool moe = !dims_.moe_layers.empty() && dims_.moe_layers[l];
    if (moe != !layer.moe.empty() || (moe && (layer.moe.experts() != dims_.experts || layer.moe.top_k == 0 ||
                                              layer.moe.top_k > dims_.experts))) {
      throw Error(ErrorKind::Internal, "Encoder: a mixture-of-experts layer does not match the dimensions");
    }
    for (const LoraLinear* lora :
         {&layer.qkv_lora, &layer.attn_out_lora, &layer.ffn_in_lora, &layer.ffn_out_lora}) {
      if (!lora->empty() &&
          (lora->tasks() != w_.adapters || lora->down.size() != lora->tasks() * lora->rank * lora->in)) {
        throw Error(ErrorKind::Internal, "Encoder: a layer's task adapters do not match the model's tasks");
      }
    }
    if (!layer.ffn_in_lora.empty() && (dims_.gated_ffn || moe)) {
      throw Error(ErrorKind::Internal, "Encoder: task adapters on a layer kind that does not take them");
    }
    if (dims_.gated_ffn && layer.ffn_gated.width() != dims_.intermediate) {
      throw Error(ErrorKind::Internal, "Encoder: the gated FFN layer does not match the dimensions");
    }
    if (dims_.qk_norm &&
        (layer.q_norm.gamma.size() != dims_.head_size() || layer.k_norm.gamma.size() != dims_.head_size())) {
      throw Error(ErrorKind::Internal, "Encoder: the query/key norms do not match the heads");
    }
  }
}

void Encoder::validate(const TokenBatch& batch) const {
  if (batch.type_ids.size() != batch.ids.size()) {
    throw Error(ErrorKind::InvalidInput, "token type ids and token ids differ in length");
  }
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    const std::size_t len = batch.length(s);
    if (len == 0) throw Error(ErrorKind::InvalidInput, fmt::format("sequence {} has no tokens", s));
    if (len + dims_.position_offset > dims_.max_positions) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("sequence {} has {} tokens; the model takes at most {}", s, len,
                              dims_.max_positions - dims_.position_offset));
    }
  }
  if (!batch.adapters.empty() && batch.adapters.size() != batch.sequences()) {
    throw Error(ErrorKind::InvalidInput, "the batch's adapters do not match its sequences");
  }
  for (const std::int32_t a : batch.adapters) {
    if (a != TokenBatch::kNoAdapter && (a < 0 || static_cast<std::size_t>(a) >= w_.adapters)) {
      throw Error(ErrorKind::InvalidInput,
                  w_.adapters == 0 ? std::string("this model has no task adapters")
                                   : fmt::format("task adapter {} is outside [0, {})", a, w_.adapters));
    }
  }
  if (!batch.visible_keys.empty() && !dims_.relative_rows.empty()) {
    throw Error(ErrorKind::Unsupported,
                "this architecture's relative attention does not hide tokens from attention (ColBERT's "
                "query expansion without attend_to_expansion_tokens)");
  }
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    if (batch.ids[t] >= dims_.vocab) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("token id {} is outside the vocabulary (size {})", batch.ids[t], dims_.vocab));
    }
    const std::size_t types = dims_.type_vocab == 0 ? 1 : dims_.type_vocab;
    if (batch.type_ids[t] >= types) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("token type id {} is outside [0, {})", batch.type_ids[t], types));
    }
  }
}

Precision Encoder::precision() const noexcept {
  return w_.layers.empty() ? w_.word_embeddings.precision() : w_.layers.front().qkv.precision();
}

void Encoder::embed_adapters(const TokenBatch& batch, float* x) const {
  if (batch.adapters.empty() || (w_.word_lora.empty() && w_.type_lora.empty())) return;
  const std::size_t h = dims_.hidden;
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    const std::int32_t task = batch.adapter(s);
    if (task == TokenBatch::kNoAdapter) continue;
    const auto t = static_cast<std::size_t>(task);
    for (std::size_t i = batch.offsets[s]; i < batch.offsets[s + 1]; ++i) {
      if (!w_.word_lora.empty()) w_.word_lora.add(t, batch.ids[i], x + i * h);
      if (!w_.type_lora.empty() && dims_.type_vocab > 0) w_.type_lora.add(t, batch.type_ids[i], x + i * h);
    }
  }
}

void Encoder::embed(const TokenBatch& batch, float* x, float* scratch) const {
  const std::size_t h = dims_.hidden;
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    std::size_t next_position = dims_.position_offset;
    for (std::size_t t = batch.offsets[s]; t < batch.offsets[s + 1]; ++t) {
      const bool padding = dims_.padding_idx && batch.ids[t] == *dims_.padding_idx;
      const std::size_t pos = padding ? *dims_.padding_idx : next_position++;
      const float* word = w_.word_embeddings.row(batch.ids[t], scratch);
      float* row = x + t * h;
      if (!dims_.position_embeddings) {
        if (dims_.type_vocab > 0) {
          const float* type = w_.token_type_embeddings.row(batch.type_ids[t], nullptr);
          for (std::size_t j = 0; j < h; ++j) row[j] = word[j] + type[j];
        } else if (dims_.embedding_scale != 1.0F) {
          for (std::size_t j = 0; j < h; ++j) row[j] = word[j] * dims_.embedding_scale;
        } else {
          std::copy(word, word + h, row);
        }
        continue;
      }
      const float* position = w_.position_embeddings.row(pos, nullptr);
      // Same summation order as HF: (word + token type) + position.
      if (dims_.type_vocab > 0) {
        const float* type = w_.token_type_embeddings.row(batch.type_ids[t], nullptr);
        for (std::size_t j = 0; j < h; ++j) row[j] = word[j] + type[j] + position[j];
      } else {
        for (std::size_t j = 0; j < h; ++j) row[j] = word[j] + position[j];
      }
    }
  }
}

std::vector<const kernels::RotaryTable*> Encoder::rotary_tables(
    const TokenBatch& batch, EncoderWorkspace& ws, std::span<const float> inv_freq,
    std::vector<kernels::RotaryTable>& scaled) const {
  const std::size_t n = batch.sequences();
  const auto scaled_length = [this](std::size_t len) {
    return dims_.rotary_ntk_factor && len > dims_.rotary_max_trained;
  };
  std::size_t longest = 0;
  std::size_t scaled_count = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (scaled_length(batch.length(s))) {
      ++scaled_count;
    } else {
      longest = std::max(longest, batch.length(s));
    }
  }
  const kernels::RotaryTable& base = ws.rotary(inv_freq, longest);
  scaled.clear();
  scaled.reserve(scaled_count);  // no reallocation: the pointers below stay valid
  std::vector<const kernels::RotaryTable*> tables(n, &base);
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t len = batch.length(s);
    if (!scaled_length(len)) continue;
    // NomicBertDynamicNTKRotaryEmbedding: base · ((factor · len / trained) − (factor − 1))^(d / (d − 2)),
    // in double as Python computes it, for this sequence's length.
    const double factor = *dims_.rotary_ntk_factor;
    const auto d = static_cast<double>(dims_.rotary_dims);
    const double base_scaled =
        dims_.rotary_base *
        std::pow(factor * static_cast<double>(len) / static_cast<double>(dims_.rotary_max_trained) -
                     (factor - 1.0),
                 d / (d - 2.0));
    scaled.push_back(
        kernels::RotaryTable::make(kernels::rotary_inv_freq(base_scaled, dims_.rotary_dims), len));
    tables[s] = &scaled.back();
  }
  return tables;
}

std::span<const float> Encoder::forward(const TokenBatch& batch, EncoderWorkspace& ws,
                                        ThreadPool* pool) const {
  const std::size_t tokens = batch.tokens();
  const std::size_t h = dims_.hidden;
  if (tokens == 0) return {};
  const std::size_t head_dim = dims_.head_size();
  const std::size_t q_cols = dims_.heads * head_dim;
  const std::size_t width = dims_.qkv_width();
  float* x = ws.hidden(tokens * h);
  float* qkv = ws.qkv(tokens * width);
  float* ctx = ws.context(tokens * std::max(h, q_cols));  // the context, or a pre-LN sublayer's input
  // The FFN's activations, and before them a post-normed attention output ([tokens x hidden]).
  float* ffn = ws.ffn(tokens * std::max(dims_.intermediate, h));

  embed(batch, x, ws.row(h));
  embed_adapters(batch, x);
  // The layers' adapters: C += (A·downᵀ)·upᵀ for the sequences that name a task.
  const bool adapted = w_.adapters > 0 && !batch.adapters.empty();
  auto adapt = [&](const float* a, std::size_t lda, const LoraLinear& lora, float* c, std::size_t ldc) {
    if (adapted && !lora.empty()) add_lora(a, lda, batch, lora, c, ldc, ws.lora(tokens * lora.rank), pool);
  };
  auto norm_of = [&](const float* in, const LayerNormWeights& n, float* out) {
    if (dims_.rms_norm) {
      kernels::rms_norm(in, h, out, h, tokens, h, n.gamma.data(), dims_.layer_norm_eps, pool);
    } else {
      kernels::layer_norm(in, h, out, h, tokens, h, n.gamma.data(), n.beta.data(), dims_.layer_norm_eps,
                          pool);
    }
  };
  auto norm = [&](const LayerNormWeights& n, float* out) { norm_of(x, n, out); };
  // X += LN'(A·Wᵀ) through `scratch` when the layer norms the sublayer's output (Gemma), else the
  // residual add fused into the GEMM.
  auto sublayer_out = [&](const float* a, std::size_t k, const kernels::DenseLayer& w, const LoraLinear& lora,
                          const LayerNormWeights& post, float* scratch) {
    if (post.gamma.empty()) {
      kernels::dense(a, k, tokens, w, x, h, {kernels::Activation::None, x, h}, pool);
      adapt(a, k, lora, x, h);
      return;
    }
    kernels::dense(a, k, tokens, w, scratch, h, {}, pool);
    adapt(a, k, lora, scratch, h);
    norm_of(scratch, post, scratch);
    for (std::size_t i = 0; i < tokens * h; ++i) x[i] += scratch[i];
  };
  if (!w_.embedding_norm.gamma.empty()) norm(w_.embedding_norm, x);
  const float terms = 1.0F + (dims_.c2p ? 1.0F : 0.0F) + (dims_.p2c ? 1.0F : 0.0F);
  kernels::AttentionShape shape{
      dims_.heads, head_dim,
      dims_.attention_scale.value_or(1.0F / std::sqrt(static_cast<float>(head_dim) * terms)), dims_.kv_heads,
      dims_.causal};
  // Dense layers in int8 or bf16: the attention's products in bf16 too (docs/precision.md) —
  // unless tokens are routed to experts, whose top-k choice that extra rounding can flip
  // (a token of the MoE fixture then fell to cosine 0.965 in int8).
  shape.bf16_products = precision() != Precision::Float32 && dims_.moe_layers.empty();
  std::vector<kernels::RotaryTable> scaled_rotary;
  std::vector<kernels::RotaryTable> scaled_local_rotary;
  std::vector<const kernels::RotaryTable*> rotary;
  std::vector<const kernels::RotaryTable*> local_rotary;
  if (dims_.rotary_dims > 0) rotary = rotary_tables(batch, ws, rotary_inv_freq_, scaled_rotary);
  if (!local_rotary_inv_freq_.empty()) {
    local_rotary = rotary_tables(batch, ws, local_rotary_inv_freq_, scaled_local_rotary);
  }
  for (std::size_t l = 0; l < w_.layers.size(); ++l) {
    const EncoderLayer& layer = w_.layers[l];
    const bool local_rope = !dims_.local_rotary_layers.empty() && dims_.local_rotary_layers[l];
    const std::size_t window =
        !dims_.windowed_layers.empty() && dims_.windowed_layers[l] ? dims_.attention_window : 0;
    // Pre-LN: the sublayer reads LN(X) from the context buffer, free until the attention writes it.
    const float* attn_in = x;
    if (dims_.pre_norm && !layer.attn_norm.gamma.empty()) {
      norm(layer.attn_norm, ctx);
      attn_in = ctx;
    }
    kernels::dense(attn_in, h, tokens, layer.qkv, qkv, width, {}, pool);
    adapt(attn_in, h, layer.qkv_lora, qkv, width);
    if (dims_.qk_norm) {
      kernels::rms_norm_heads(qkv, width, tokens, dims_.heads, head_dim, layer.q_norm.gamma.data(),
                              dims_.layer_norm_eps, pool);
      kernels::rms_norm_heads(qkv + q_cols, width, tokens, dims_.kv_head_count(), head_dim,
                              layer.k_norm.gamma.data(), dims_.layer_norm_eps, pool);
    }
    if (!rotary.empty()) {
      kernels::apply_rotary(qkv, width, batch.offsets, dims_.heads + dims_.kv_head_count(), head_dim,
                            local_rope ? local_rotary : rotary, dims_.rotary_interleaved, pool);
    }
    if (dims_.relative_rows.empty()) {
      kernels::attention(qkv, width, batch.offsets, shape, ctx, q_cols, pool, w_.distance_bias, window,
                         batch.visible_keys);
    } else {
      kernels::RelativePositions rel;
      rel.pos_key = layer.pos_key;
      rel.pos_query = layer.pos_query;
      rel.rows = dims_.relative_rows;
      rel.max_distance = dims_.max_positions - 1;
      kernels::relative_attention(qkv, width, batch.offsets, shape, rel, ctx, h, pool);
    }
    sublayer_out(ctx, q_cols, layer.attn_out, layer.attn_out_lora, layer.post_attn_norm, ffn);
    const float* ffn_in = x;
    if (dims_.pre_norm) {
      norm(layer.ffn_norm, ctx);
      ffn_in = ctx;
    } else {
      norm(layer.attn_norm, x);
    }
    if (!layer.moe.empty()) {
      // NomicBertBlock: X = LN(X + (Σ experts + b)), the experts' sum formed apart as upstream.
      moe_ffn(ffn_in, h, tokens, h, layer.moe, dims_.ffn_activation, ffn, ws.moe(), pool);
      for (std::size_t i = 0; i < tokens * h; ++i) x[i] += ffn[i];
    } else {
      if (dims_.gated_ffn) {
        kernels::gated_dense(ffn_in, h, tokens, layer.ffn_gated, dims_.ffn_activation, ffn,
                             dims_.intermediate, pool);
      } else if (adapted && !layer.ffn_in_lora.empty()) {
        // The adapter's product joins the sum before the activation.
        kernels::dense(ffn_in, h, tokens, layer.ffn_in, ffn, dims_.intermediate, {}, pool);
        adapt(ffn_in, h, layer.ffn_in_lora, ffn, dims_.intermediate);
        kernels::activate_rows(ffn, dims_.intermediate, tokens, dims_.intermediate, dims_.ffn_activation,
                               pool);
      } else {
        kernels::dense(ffn_in, h, tokens, layer.ffn_in, ffn, dims_.intermediate, {dims_.ffn_activation},
                       pool);
      }
      // The FFN's input in the context buffer is spent: it holds a post-normed output.
      sublayer_out(ffn, dims_.intermediate, layer.ffn_out, layer.ffn_out_lora, layer.post_ffn_norm, ctx);
    }
    if (!dims_.pre_norm) norm(layer.ffn_norm, x);
  }
  if (!w_.final_norm.gamma.empty()) norm(w_.final_norm, x);
  return {x, tokens * h};
}

std::size_t Encoder::weight_bytes() const noexcept {
  return w_.word_embeddings.bytes() + w_.position_embeddings.bytes() + w_.token_type_embeddings.bytes() +
         w_.word_lora.bytes() + w_.type_lora.bytes() + layer_bytes();
}

std::size_t Encoder::layer_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const auto& l : w_.layers) {
    bytes += l.qkv.bytes() + l.attn_out.bytes() + l.ffn_in.bytes() + l.ffn_gated.bytes() + l.ffn_out.bytes();
    bytes += (l.attn_norm.gamma.size() + l.attn_norm.beta.size() + l.ffn_norm.gamma.size() +
              l.ffn_norm.beta.size() + l.q_norm.gamma.size() + l.k_norm.gamma.size() +
              l.post_attn_norm.gamma.size() + l.post_ffn_norm.gamma.size()) *
             sizeof(float);
    bytes += l.moe.bytes();
    bytes += l.qkv_lora.bytes() + l.attn_out_lora.bytes() + l.ffn_in_lora.bytes() + l.ffn_out_lora.bytes();
    for (const auto& t : l.pos_key) bytes += t.bytes();
    for (const auto& t : l.pos_query) bytes += t.bytes();
  }
  return bytes;
}

}  // namespace warden::model::engine

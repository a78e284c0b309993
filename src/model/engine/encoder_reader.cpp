#include "model/engine/encoder_reader.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <vector>

#include <fmt/format.h>

#include "core/thread_pool.hpp"
#include "kernels/layer_norm.hpp"
#include "model/engine/packed_image.hpp"
#include "model/engine/weight_reader.hpp"

namespace warden::model::engine {

namespace {

// Runs load(i) for every layer, on the pool when there is one; the first error wins.
template <typename Load>
std::vector<EncoderLayer> load_layers(std::size_t layers, ThreadPool* pool, Load load) {
  std::vector<EncoderLayer> out(layers);
  std::vector<std::exception_ptr> errors(layers);
  auto task = [&](std::size_t i) {
    try {
      out[i] = load(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  parallel_for(pool, layers, task);
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return out;
}

bool is_moe_layer(const EncoderDims& d, std::size_t layer) {
  return !d.moe_layers.empty() && d.moe_layers[layer];
}

// Bytes of one encoder layer's dense layers, in the order read_encoder packs them: a
// mixture-of-experts layer's experts (every input matrix, then every output one) in place of the FFN.
std::size_t layer_arena_bytes(const EncoderDims& d, std::size_t layer, Precision precision, Isa isa) {
  const std::size_t h = d.hidden;
  const std::size_t i = d.intermediate;
  const std::size_t attention = kernels::DenseLayer::arena_bytes(precision, d.qkv_width(), h, isa) +
                                kernels::DenseLayer::arena_bytes(precision, h, d.heads * d.head_size(), isa);
  if (is_moe_layer(d, layer)) {
    return attention + d.experts * (kernels::DenseLayer::arena_bytes(precision, i, h, isa) +
                                    kernels::DenseLayer::arena_bytes(precision, h, i, isa));
  }
  return attention +
         (d.gated_ffn ? kernels::GatedDense::arena_bytes(precision, i, h, isa)
                      : kernels::DenseLayer::arena_bytes(precision, i, h, isa)) +
         kernels::DenseLayer::arena_bytes(precision, h, i, isa);
}

std::size_t relative_arena_bytes(const RelativeSpec& rel, const EncoderDims& d, Isa isa) {
  if (rel.table_rows == 0) return 0;
  const std::size_t terms = (d.c2p ? 1U : 0U) + (d.p2c ? 1U : 0U);
  return terms * d.heads *
         Arena::footprint<std::byte>(
             kernels::PackedLinear::arena_bytes(rel.table_rows, d.hidden / d.heads, isa));
}

// One term's per-head slices for a layer: projected from `table` by the layer `base` (in
// `arena`), or, over a prefilled arena, the slices it holds.
std::vector<kernels::PackedLinear> relative_heads(const WeightReader& r, const std::string& base,
                                                  std::span<const float> table, std::size_t table_rows,
                                                  const EncoderDims& d, Isa isa, Arena& arena) {
  const std::size_t h = d.hidden;
  const std::size_t head_dim = h / d.heads;
  std::vector<kernels::PackedLinear> heads;
  heads.reserve(d.heads);
  if (arena.prefilled()) {
    for (std::size_t hd = 0; hd < d.heads; ++hd) heads.emplace_back(table_rows, head_dim, isa, &arena);
    return heads;
  }
  const kernels::PackedLinear layer = r.linear(base, h, h);
  std::vector<float> projected(table_rows * h);
  kernels::linear(table.data(), h, table_rows, layer, projected.data(), h);
  std::vector<float> slice(table_rows * head_dim);
  for (std::size_t hd = 0; hd < d.heads; ++hd) {
    for (std::size_t row = 0; row < table_rows; ++row) {
      std::copy_n(projected.data() + row * h + hd * head_dim, head_dim, slice.data() + row * head_dim);
    }
    heads.emplace_back(table_rows, head_dim, isa, &arena);
    heads.back().set_rows(0, table_rows, slice, {});
  }
  return heads;
}

}  // namespace

EncoderWeights read_encoder(const formats::ModelWeights& weights, const std::string& prefix, Isa isa,
                            Precision precision, const EncoderDims& d, const LayerNames& names,
                            const RelativeSpec& relative, const LayerBiases& biases, ThreadPool* pool) {
  EncoderWeights w;
  const WeightReader r(weights, prefix, isa, precision);
  const std::size_t h = d.hidden;
  // The word embeddings (when converted) and then every layer get a fixed part of the
  // arena, so its bytes do not depend on the order the pool loads the layers in, and a
  // packed image of them can be mapped back.
  const std::size_t table_bytes =
      Arena::footprint<std::byte>(r.table_arena_bytes(names.word_embeddings, d.vocab, h));
  std::vector<std::size_t> per_layer(d.layers);
  std::size_t total = table_bytes;
  for (std::size_t i = 0; i < d.layers; ++i) {
    per_layer[i] = Arena::footprint<std::byte>(layer_arena_bytes(d, i, precision, isa)) +
                   relative_arena_bytes(relative, d, isa);
    total += per_layer[i];
  }
  PackedArena packed = open_packed_arena(
      weights,
      fmt::format(
          "encoder prefix={} names={} vocab={} hidden={} intermediate={} layers={} table={} precision={} "
          "isa={} relative={}/{}{}{}{} ffn={}{} biases={}{}{}{}{} moe={}x{}/{}",
          prefix, names.layer_prefix, d.vocab, d.hidden, d.intermediate, d.layers, table_bytes,
          precision_name(precision), isa_name(isa), relative.table_rows, d.c2p ? "c2p" : "",
          d.p2c ? "p2c" : "", relative.norm ? "norm" : "", relative.shared ? "shared" : "",
          d.gated_ffn ? names.ffn_gated : names.ffn_in, names.ffn_gate, biases.attention ? 1 : 0,
          biases.ffn_in ? 1 : 0, biases.ffn_out ? 1 : 0, biases.norms ? "" : "/no-norm-bias",
          biases.attention_out_unbiased ? "/no-out-bias" : "", d.experts, d.moe_top_k,
          std::count(d.moe_layers.begin(), d.moe_layers.end(), true)),
      total);
  Arena table_arena = packed.arena->child(table_bytes);
  std::vector<Arena> layer_arenas;
  layer_arenas.reserve(d.layers);
  for (std::size_t i = 0; i < d.layers; ++i) layer_arenas.push_back(packed.arena->child(per_layer[i]));

  w.word_embeddings = r.table(names.word_embeddings, d.vocab, h, table_arena);
  if (d.position_embeddings) {
    w.position_embeddings = r.float_table("embeddings.position_embeddings.weight", d.max_positions, h);
  }
  if (d.type_vocab > 0) {
    w.token_type_embeddings = r.float_table("embeddings.token_type_embeddings.weight", d.type_vocab, h);
  }
  // An RMSNorm has a weight only.
  const auto read_norm = [&](const WeightReader& reader, std::string_view base, std::size_t n) {
    LayerNormWeights read = reader.layer_norm(base, n, biases.norms && !d.rms_norm);
    if (d.rms_norm) read.beta.clear();
    // In float32, as Gemma's (1.0 + self.weight.float()).
    if (names.norm_weights_from_one) {
      for (float& g : read.gamma) g += 1.0F;
    }
    return read;
  };
  if (!names.embedding_norm.empty()) w.embedding_norm = read_norm(r, names.embedding_norm, h);
  if (!names.final_norm.empty()) w.final_norm = read_norm(r, names.final_norm, h);
  std::vector<float> rel_table;  // the (normalised) relative table, when the layers need it
  if (relative.table_rows > 0 && !packed.arena->prefilled()) {
    rel_table = r.floats("encoder.rel_embeddings.weight", {relative.table_rows, h});
    if (relative.norm) {
      const LayerNormWeights norm = r.layer_norm("encoder.LayerNorm", h);
      kernels::layer_norm(rel_table.data(), h, rel_table.data(), h, relative.table_rows, h, norm.gamma.data(),
                          norm.beta.data(), d.layer_norm_eps, pool);
    }
  }
  w.layers = load_layers(d.layers, pool, [&](std::size_t i) {
    const std::string p = fmt::format("{}{}.", names.layer_prefix, i);
    auto name = [&p](std::string_view n) { return p + std::string(n); };
    const WeightReader reader(weights, prefix, isa, precision, &layer_arenas[i]);
    EncoderLayer layer;
    const std::size_t q_rows = d.heads * d.head_size();
    const std::size_t kv_rows = d.kv_head_count() * d.head_size();
    if (names.k.empty()) {
      layer.qkv = reader.dense({name(names.q)}, d.qkv_width(), h, biases.attention);
    } else {
      const std::string q = name(names.q);
      const std::string k = name(names.k);
      const std::string v = name(names.v);
      const std::array<WeightReader::DenseRows, 3> parts{{{q, q_rows}, {k, kv_rows}, {v, kv_rows}}};
      layer.qkv = reader.dense(parts, h, biases.attention);
    }
    layer.attn_out =
        reader.dense({name(names.attn_out)}, h, q_rows, biases.attention && !biases.attention_out_unbiased);
    if (i > 0 || names.first_attn_norm) layer.attn_norm = read_norm(reader, name(names.attn_norm), h);
    if (d.qk_norm) {
      layer.q_norm = read_norm(reader, name(names.q_norm), d.head_size());
      layer.k_norm = read_norm(reader, name(names.k_norm), d.head_size());
    }
    if (is_moe_layer(d, i)) {
      // Router, then every expert's input matrix and every expert's output matrix.
      layer.moe.router = reader.linear(name(names.moe_router), d.experts, h, false);
      layer.moe.up = reader.experts(name(names.moe_up), d.experts, d.intermediate, h, false);
      layer.moe.down = reader.experts(name(names.moe_down), d.experts, d.intermediate, h, true);
      layer.moe.bias = reader.floats(name(names.moe_bias), {h});
      layer.moe.top_k = d.moe_top_k;
    } else if (d.gated_ffn && !names.ffn_gate.empty()) {
      layer.ffn_gated =
          reader.gated_pair(name(names.ffn_gated), name(names.ffn_gate), d.intermediate, h, biases.ffn_in);
    } else if (d.gated_ffn) {
      layer.ffn_gated = reader.gated(name(names.ffn_gated), d.intermediate, h, !names.gate_first);
    } else {
      layer.ffn_in = reader.dense({name(names.ffn_in)}, d.intermediate, h, biases.ffn_in);
    }
    if (!is_moe_layer(d, i))
      layer.ffn_out = reader.dense({name(names.ffn_out)}, h, d.intermediate, biases.ffn_out);
    layer.ffn_norm = read_norm(reader, name(names.ffn_norm), h);
    if (!names.post_attn_norm.empty())
      layer.post_attn_norm = read_norm(reader, name(names.post_attn_norm), h);
    if (!names.post_ffn_norm.empty()) layer.post_ffn_norm = read_norm(reader, name(names.post_ffn_norm), h);
    if (relative.table_rows > 0) {
      // After the dense layers, in the same part of the arena.
      if (d.c2p) {
        layer.pos_key = relative_heads(r, name(relative.shared ? names.k : "attention.self.pos_key_proj"),
                                       rel_table, relative.table_rows, d, isa, layer_arenas[i]);
      }
      if (d.p2c) {
        layer.pos_query = relative_heads(r, name(relative.shared ? names.q : "attention.self.pos_query_proj"),
                                         rel_table, relative.table_rows, d, isa, layer_arenas[i]);
      }
    }
    return layer;
  });
  save_packed_arena(packed, weights);
  w.arena = std::move(packed.arena);
  w.packed_image = packed.use;
  w.packed_image_note = packed.note;
  return w;
}

}  // namespace warden::model::engine

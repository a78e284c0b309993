#include "model/use_lite/use_lite.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "kernels/attention.hpp"
#include "kernels/layer_norm.hpp"
#include "model/formats/json_fields.hpp"
#include "model/formats/weights.hpp"
#include "model/use_lite/use_lite_format.hpp"

namespace warden::model::use_lite {

namespace fs = std::filesystem;

UseLiteConfig read_use_lite_config(const fs::path& dir) {
  const fs::path path = dir / use_lite::kConfigFile;
  const std::string text = read_file(path);
  simdjson::dom::parser parser;
  const formats::json_fields::Fields f(formats::json_fields::parse_object(parser, text, path.string()),
                                       path.string());
  const auto archs = f.array("architectures");
  std::string_view arch;
  if (!archs || archs->size() != 1 || archs->at(0).get_string().get(arch) != simdjson::SUCCESS ||
      arch != use_lite::kArchitecture) {
    throw f.fail("architectures", fmt::format("must be [\"{}\"]", use_lite::kArchitecture));
  }
  UseLiteConfig c;
  // The converter writes exactly this architecture; anything else is not USE-lite.
  auto exact = [&](std::string_view key, std::int64_t expected) {
    const std::int64_t v = f.integer_in(key, expected, expected);
    return static_cast<std::size_t>(v);
  };
  c.vocab = exact("vocab_size", 8002);
  c.embedding = exact("embedding_size", 256);
  c.hidden = exact("hidden_size", 512);
  c.layers = exact("num_hidden_layers", 2);
  c.heads = exact("num_attention_heads", 4);
  c.intermediate = exact("intermediate_size", 1536);
  c.max_length = exact("max_length", 128);
  auto positive = [&](std::string_view key) {
    const auto v = f.number(key);
    if (!v || !(*v > 0.0) || !(*v < 1.0)) throw f.fail(key, "must be a number in (0, 1)");
    return static_cast<float>(*v);
  };
  c.layer_norm_eps = positive("layer_norm_eps");
  c.l2_eps = positive("l2_normalize_eps");
  const auto scales = f.array("attention_scales");
  if (!scales || scales->size() != c.layers)
    throw f.fail("attention_scales", "must hold one number per layer");
  for (const simdjson::dom::element s : *scales) {
    double v = 0.0;
    if (s.get_double().get(v) != simdjson::SUCCESS || !(v > 0.0) || !(v <= 1.0)) {
      throw f.fail("attention_scales", "must hold numbers in (0, 1]");
    }
    c.attention_scales.push_back(static_cast<float>(v));
  }
  return c;
}

float* UseLiteWorkspace::get(std::size_t slot, std::size_t floats) {
  AlignedBuffer<float>& b = buffers_[slot];
  if (b.size() < floats) b = AlignedBuffer<float>(floats);
  return b.data();
}

namespace {

std::vector<float> read_floats(const formats::ModelWeights& w, std::string_view name,
                               std::initializer_list<std::size_t> shape) {
  return formats::to_float32(w.require(name, shape));
}

// A dense layer packed into `arena`, or the one a prefilled arena holds.
kernels::DenseLayer read_dense(const formats::ModelWeights& w, Precision precision, std::size_t layer,
                               std::string_view part, std::size_t n, std::size_t k, Isa isa, Arena& arena) {
  if (arena.prefilled()) return kernels::DenseLayer::prefilled(precision, n, k, isa, arena);
  const auto weight = read_floats(w, use_lite::layer_tensor(layer, part, "weight"), {n, k});
  const auto bias = read_floats(w, use_lite::layer_tensor(layer, part, "bias"), {n});
  return kernels::DenseLayer::make(precision, weight, n, k, bias, isa, &arena);
}

// Workspace slots.
enum Slot : std::size_t { kEmbedded, kState, kNormed, kQkv, kContext, kFfn, kPooled, kHead, kRow };

}  // namespace

std::unique_ptr<UseLiteModel> UseLiteModel::load(const fs::path& dir, ThreadPool* pool, Precision precision) {
  auto m = std::make_unique<UseLiteModel>(Private{});
  m->config_ = read_use_lite_config(dir);
  m->precision_ = precision;
  const UseLiteConfig& c = m->config_;
  m->weights_ =
      std::make_unique<formats::ModelWeights>(formats::ModelWeights::open_file(dir / use_lite::kWeightsFile));
  const formats::ModelWeights& w = *m->weights_;
  const Isa isa = active_isa();

  // Everything packed lives in one arena, in load order (the table unless it is read in
  // place, each layer's dense layers, the head), mapped from a packed image when there is one.
  const formats::Tensor& table = w.require(use_lite::kEmbeddings, {c.vocab, c.embedding});
  const bool table_in_place = precision == Precision::Float32 && formats::is_aligned_float32(table);
  std::size_t bytes =
      table_in_place ? 0 : engine::EmbeddingTable::arena_bytes(precision, c.vocab, c.embedding);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::size_t in = l == 0 ? c.embedding : c.hidden;
    if (in != c.hidden) bytes += kernels::DenseLayer::arena_bytes(precision, c.hidden, in, isa);
    bytes += kernels::DenseLayer::arena_bytes(precision, 3 * in, in, isa) +
             kernels::DenseLayer::arena_bytes(precision, c.hidden, in, isa) +
             kernels::DenseLayer::arena_bytes(precision, c.intermediate, c.hidden, isa) +
             kernels::DenseLayer::arena_bytes(precision, c.hidden, c.intermediate, isa);
  }
  bytes += kernels::PackedLinear::arena_bytes(c.hidden, c.hidden, isa);
  engine::PackedArena packed = engine::open_packed_arena(
      w,
      fmt::format("use-lite vocab={} embedding={} hidden={} intermediate={} layers={} precision={} isa={}",
                  c.vocab, c.embedding, c.hidden, c.intermediate, c.layers, precision_name(precision),
                  isa_name(isa)),
      bytes);
  Arena& arena = *packed.arena;

  if (table_in_place) {
    m->embeddings_ = engine::EmbeddingTable::view(formats::as_float32(table), c.vocab, c.embedding);
  } else if (arena.prefilled()) {
    m->embeddings_ = engine::EmbeddingTable::prefilled(precision, c.vocab, c.embedding, arena);
  } else {
    m->embeddings_ =
        engine::EmbeddingTable::make(precision, formats::to_float32(table), c.vocab, c.embedding, &arena);
  }
  // The timing signal of every position, computed once as TF.js computes it per call: a
  // float32 product with the stored inverse timescales, then a double sin/cos rounded to
  // float32. Sines first, then cosines (concatenated, not interleaved).
  const std::vector<float> inv = read_floats(w, use_lite::kInvTimescales, {c.embedding / 2});
  const std::size_t half = c.embedding / 2;
  m->timing_.resize(c.max_length * c.embedding);
  for (std::size_t t = 0; t < c.max_length; ++t) {
    for (std::size_t i = 0; i < half; ++i) {
      const float scaled = static_cast<float>(t) * inv[i];
      m->timing_[t * c.embedding + i] = static_cast<float>(std::sin(static_cast<double>(scaled)));
      m->timing_[t * c.embedding + half + i] = static_cast<float>(std::cos(static_cast<double>(scaled)));
    }
  }
  m->layers_.resize(c.layers);
  auto load_layer = [&](std::size_t l) {
    Layer& layer = m->layers_[l];
    const std::size_t in = l == 0 ? c.embedding : c.hidden;
    layer.in = in;
    if (in != c.hidden)
      layer.projection = read_dense(w, precision, l, "input_projection", c.hidden, in, isa, arena);
    layer.attention_norm = {read_floats(w, use_lite::layer_tensor(l, "attention_norm", "weight"), {in}),
                            read_floats(w, use_lite::layer_tensor(l, "attention_norm", "bias"), {in})};
    layer.qkv = read_dense(w, precision, l, "qkv", 3 * in, in, isa, arena);
    layer.attention_output = read_dense(w, precision, l, "attention_output", c.hidden, in, isa, arena);
    layer.ffn_norm = {read_floats(w, use_lite::layer_tensor(l, "ffn_norm", "weight"), {c.hidden}),
                      read_floats(w, use_lite::layer_tensor(l, "ffn_norm", "bias"), {c.hidden})};
    layer.ffn_in = read_dense(w, precision, l, "ffn_in", c.intermediate, c.hidden, isa, arena);
    layer.ffn_out = read_dense(w, precision, l, "ffn_out", c.hidden, c.intermediate, isa, arena);
  };
  // Loading throws on a bad file and the pool's tasks must not, so layers load serially:
  // the whole model (7M parameters) packs in a few milliseconds.
  (void)pool;
  for (std::size_t l = 0; l < c.layers; ++l) load_layer(l);
  m->head_ = kernels::PackedLinear(c.hidden, c.hidden, isa, &arena);
  if (!arena.prefilled()) {
    m->head_.set_rows(0, c.hidden, read_floats(w, use_lite::kHeadWeight, {c.hidden, c.hidden}),
                      read_floats(w, use_lite::kHeadBias, {c.hidden}));
  }
  engine::save_packed_arena(packed, w);
  m->packed_image_ = packed.use;
  m->arena_ = std::move(packed.arena);
  return m;
}

void UseLiteModel::validate(const engine::TokenBatch& batch) const {
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    if (batch.length(s) > config_.max_length) {
      throw Error(ErrorKind::InvalidInput, fmt::format("sequence {} has {} tokens; USE-lite takes at most {}",
                                                       s, batch.length(s), config_.max_length));
    }
  }
  for (const std::uint32_t id : batch.ids) {
    if (id >= config_.vocab) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("token id {} is outside the vocabulary (size {})", id, config_.vocab));
    }
  }
}

std::size_t UseLiteModel::weight_bytes() const noexcept {
  std::size_t bytes = embeddings_.bytes() + timing_.size() * sizeof(float) + head_.bytes();
  for (const Layer& l : layers_) {
    bytes += l.projection.bytes() + l.qkv.bytes() + l.attention_output.bytes() + l.ffn_in.bytes() +
             l.ffn_out.bytes();
    bytes += (l.attention_norm.gamma.size() * 2 + l.ffn_norm.gamma.size() * 2) * sizeof(float);
  }
  return bytes;
}

void UseLiteModel::embed_tokens(const engine::TokenBatch& batch, float* x, float* scratch) const {
  const std::size_t d = config_.embedding;
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    for (std::size_t t = batch.offsets[s]; t < batch.offsets[s + 1]; ++t) {
      const float* emb = embeddings_.row(batch.ids[t], scratch);
      const float* signal = timing_.data() + (t - batch.offsets[s]) * d;
      float* row = x + t * d;
      // AddTimingSignal adds the signal to the embedding, and the layer adds the embedding
      // once more: emb + (emb + signal), in that order.
      for (std::size_t i = 0; i < d; ++i) row[i] = emb[i] + (emb[i] + signal[i]);
    }
  }
}

const float* UseLiteModel::encode(const engine::TokenBatch& batch, UseLiteWorkspace& ws,
                                  ThreadPool* pool) const {
  const UseLiteConfig& c = config_;
  const std::size_t tokens = batch.tokens();
  const std::size_t h = c.hidden;
  const std::size_t rows = std::max<std::size_t>(tokens, 1);
  float* x0 = ws.get(kEmbedded, rows * c.embedding);
  float* x = ws.get(kState, rows * h);
  float* normed = ws.get(kNormed, rows * h);
  float* qkv = ws.get(kQkv, rows * 3 * h);
  float* ctx = ws.get(kContext, rows * h);
  float* ffn = ws.get(kFfn, rows * c.intermediate);

  if (tokens > 0) {
    embed_tokens(batch, x0, ws.get(kRow, c.embedding));
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const Layer& layer = layers_[l];
      const std::size_t in = layer.in;
      const float* input = l == 0 ? x0 : x;
      // The residual branch: layer 0 projects it to the hidden width, into x.
      if (l == 0) kernels::dense(x0, in, tokens, layer.projection, x, h, {}, pool);
      kernels::layer_norm(input, in, normed, in, tokens, in, layer.attention_norm.gamma.data(),
                          layer.attention_norm.beta.data(), c.layer_norm_eps, pool);
      kernels::dense(normed, in, tokens, layer.qkv, qkv, 3 * in, {}, pool);
      kernels::AttentionShape shape{c.heads, in / c.heads, c.attention_scales[l]};
      shape.bf16_products = precision_ != Precision::Float32;  // as the encoder's (docs/precision.md)
      kernels::attention(qkv, 3 * in, batch.offsets, shape, ctx, in, pool);
      kernels::dense(ctx, in, tokens, layer.attention_output, x, h, {kernels::Activation::None, x, h}, pool);
      kernels::layer_norm(x, h, normed, h, tokens, h, layer.ffn_norm.gamma.data(), layer.ffn_norm.beta.data(),
                          c.layer_norm_eps, pool);
      kernels::dense(normed, h, tokens, layer.ffn_in, ffn, c.intermediate, {kernels::Activation::Relu}, pool);
      kernels::dense(ffn, c.intermediate, tokens, layer.ffn_out, x, h, {kernels::Activation::None, x, h},
                     pool);
    }
  }
  return x;
}

void UseLiteModel::token_states(const engine::TokenBatch& batch, UseLiteWorkspace& ws, ThreadPool* pool,
                                std::span<float> out) const {
  const std::size_t n = batch.tokens() * config_.hidden;
  if (n == 0) return;
  std::copy_n(encode(batch, ws, pool), n, out.data());
}

void UseLiteModel::embed(const engine::TokenBatch& batch, UseLiteWorkspace& ws, ThreadPool* pool,
                         std::span<float> out) const {
  const UseLiteConfig& c = config_;
  const std::size_t seqs = batch.sequences();
  const std::size_t h = c.hidden;
  const float* x = encode(batch, ws, pool);

  // Masked mean over each sequence's tokens. TF.js sums in double and divides the float32
  // sum by max(len, 1): an empty sequence pools to zeros.
  float* pooled = ws.get(kPooled, seqs * h);
  for (std::size_t s = 0; s < seqs; ++s) {
    const std::size_t len = batch.length(s);
    const float divisor = static_cast<float>(std::max<std::size_t>(len, 1));
    for (std::size_t j = 0; j < h; ++j) {
      double sum = 0.0;
      for (std::size_t t = batch.offsets[s]; t < batch.offsets[s + 1]; ++t)
        sum += static_cast<double>(x[t * h + j]);
      pooled[s * h + j] = static_cast<float>(sum) / divisor;
    }
  }
  float* y = ws.get(kHead, seqs * h);
  kernels::linear(pooled, h, seqs, head_, y, h, {kernels::Activation::Tanh}, pool);
  // out = y * rsqrt(max(sum(y²), eps)), the squares summed in double as TF.js does.
  for (std::size_t s = 0; s < seqs; ++s) {
    const float* row = y + s * h;
    double sum = 0.0;
    for (std::size_t j = 0; j < h; ++j) sum += static_cast<double>(row[j] * row[j]);
    const float sq = std::max(static_cast<float>(sum), c.l2_eps);
    const auto inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sq)));
    for (std::size_t j = 0; j < h; ++j) out[s * h + j] = row[j] * inv;
  }
}

}  // namespace warden::model::use_lite

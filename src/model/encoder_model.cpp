#include "model/encoder_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "kernels/attention.hpp"
#include "kernels/layer_norm.hpp"
#include "model/relative_positions.hpp"

namespace warden::model {

namespace {

struct ArchitectureName {
  std::string_view name;
  Architecture architecture;
  bool classifier;
};

constexpr std::array<ArchitectureName, 19> kArchitectures{{
    {"BertModel", Architecture::Bert, false},
    {"BertForSequenceClassification", Architecture::Bert, true},
    {"RobertaModel", Architecture::Roberta, false},
    {"RobertaForSequenceClassification", Architecture::Roberta, true},
    {"XLMRobertaModel", Architecture::Roberta, false},
    {"XLMRobertaForSequenceClassification", Architecture::Roberta, true},
    {"DistilBertModel", Architecture::DistilBert, false},
    {"DistilBertForSequenceClassification", Architecture::DistilBert, true},
    {"DebertaV2Model", Architecture::DebertaV2, false},
    {"DebertaV2ForSequenceClassification", Architecture::DebertaV2, true},
    // JinaBERT's remote code (jinaai/jina-bert-implementation). The embedding repos name the
    // masked-LM class over bare-model weights; Warden runs the encoder and ignores the LM head.
    {"JinaBertModel", Architecture::JinaBert, false},
    {"JinaBertForMaskedLM", Architecture::JinaBert, false},
    {"JinaBertForSequenceClassification", Architecture::JinaBert, true},
    // sentence-transformers' MPNet repos (all-mpnet-base-v2, multi-qa-mpnet-base-dot-v1) name the
    // masked-LM class over bare-model weights, as JinaBERT's do.
    {"MPNetModel", Architecture::MPNet, false},
    {"MPNetForMaskedLM", Architecture::MPNet, false},
    {"MPNetForSequenceClassification", Architecture::MPNet, true},
    // NomicBERT's remote code (nomic-ai/nomic-bert-2048): nomic-embed-text-v1/v1.5.
    {"NomicBertModel", Architecture::NomicBert, false},
    // GTE's remote code (Alibaba-NLP/new-impl): gte-*-en-v1.5, gte-multilingual-base/-reranker-base.
    {"NewModel", Architecture::Gte, false},
    {"NewForSequenceClassification", Architecture::Gte, true},
}};

const ArchitectureName& find_architecture(const ModelConfig& config, const std::filesystem::path& dir) {
  std::string named;
  if (!config.architectures.empty()) {
    named = config.architectures.front();
  } else if (config.model_type == "bert") {  // configs without "architectures" are base models
    named = config.position_embedding_type == "alibi" ? "JinaBertModel" : "BertModel";
  } else if (config.model_type == "roberta") {
    named = "RobertaModel";
  } else if (config.model_type == "xlm-roberta") {
    named = "XLMRobertaModel";
  } else if (config.model_type == "distilbert") {
    named = "DistilBertModel";
  } else if (config.model_type == "deberta-v2") {
    named = "DebertaV2Model";
  } else if (config.model_type == "mpnet") {
    named = "MPNetModel";
  } else if (config.model_type == "nomic_bert") {
    named = "NomicBertModel";
  } else if (config.model_type == "new") {
    named = "NewModel";
  }
  for (const auto& a : kArchitectures) {
    if (a.name == named) return a;
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: unsupported architecture '{}' (model_type '{}'); supported: {}",
                          (dir / "config.json").string(), named.empty() ? "(none)" : named, config.model_type,
                          supported_architectures()));
}

// hidden_act (or another activation field `field`) as a kernel activation.
kernels::Activation activation_named(const std::string& name, std::string_view field,
                                     const std::filesystem::path& dir) {
  if (name == "gelu") return kernels::Activation::Gelu;
  if (name == "relu") return kernels::Activation::Relu;
  if (name == "tanh") return kernels::Activation::Tanh;
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: {} '{}' is not supported (supported: gelu, relu, tanh)",
                          (dir / "config.json").string(), field, name));
}

// Reads weights by their HF names under one prefix ("" or "bert." ...) into the model's
// precision. Float32 tensors are read in place from the mapping; after a linear layer is
// packed into its own buffer, its pages in the mapping are released so that resident memory
// stays close to one copy. Int8 checkpoints (`warden quantize`) are read as they are for an
// int8 model and dequantised for any other precision.
class WeightReader {
 public:
  // Dense layers go into `arena` when given; a prefilled arena holds them already, and
  // their weights are not read.
  WeightReader(const ModelWeights& weights, std::string prefix, Isa isa,
               Precision precision = Precision::Float32, Arena* arena = nullptr)
      : weights_(weights), prefix_(std::move(prefix)), isa_(isa), precision_(precision), arena_(arena) {}

  const Tensor& tensor(std::string_view name, std::initializer_list<std::size_t> shape) const {
    return weights_.require(prefix_ + std::string(name), shape);
  }

  std::vector<float> floats(std::string_view name, std::initializer_list<std::size_t> shape) const {
    return to_float32(tensor(name, shape));
  }

  // A float32 table viewed in the mapping where possible (position and type embeddings).
  EmbeddingTable float_table(std::string_view name, std::size_t rows, std::size_t width) const {
    const Tensor& t = tensor(name, {rows, width});
    if (is_aligned_float32(t)) return EmbeddingTable::view(as_float32(t), rows, width);
    return EmbeddingTable::make(Precision::Float32, to_float32(t), rows, width);  // f16/bf16
  }

  // Bytes table() puts in its arena: none when the table is a view of the mapping.
  std::size_t table_arena_bytes(std::string_view name, std::size_t rows, std::size_t width) const {
    const Tensor& t = weights_.require_weight(prefix_ + std::string(name), {rows, width});
    if (precision_ == Precision::Float32 && is_aligned_float32(t)) return 0;
    return EmbeddingTable::arena_bytes(precision_, rows, width);
  }

  // A table in the model's precision (the word embeddings): a view of the mapping when it
  // holds the table as it is needed, else converted into `arena`.
  EmbeddingTable table(std::string_view name, std::size_t rows, std::size_t width, Arena& arena) const {
    const std::string full = prefix_ + std::string(name);
    const Tensor& t = weights_.require_weight(full, {rows, width});
    if (precision_ == Precision::Float32 && is_aligned_float32(t)) {
      return EmbeddingTable::view(as_float32(t), rows, width);
    }
    if (arena.prefilled()) return EmbeddingTable::prefilled(precision_, rows, width, arena);
    EmbeddingTable out;
    if (t.dtype == Dtype::I8) {
      const kernels::QuantizedRows q = int8_rows(full, t, rows, width);
      out = precision_ == Precision::Int8
                ? EmbeddingTable::from_int8(q, rows, width, &arena)
                : EmbeddingTable::make(precision_, dequantize(q, width), rows, width, &arena);
    } else {
      std::vector<float> scratch;
      out = EmbeddingTable::make(
          precision_, is_aligned_float32(t) ? as_float32(t) : (scratch = to_float32(t)), rows, width, &arena);
    }
    release_pages(t.data);  // converted: the mapping's copy is no longer read
    return out;
  }

  // LayerNorm parameters; old checkpoints call them gamma/beta.
  LayerNormWeights layer_norm(std::string_view base, std::size_t n) const {
    const std::string b(base);
    if (weights_.find(prefix_ + b + ".weight") == nullptr &&
        weights_.find(prefix_ + b + ".gamma") != nullptr) {
      return {floats(b + ".gamma", {n}), floats(b + ".beta", {n})};
    }
    return {floats(b + ".weight", {n}), floats(b + ".bias", {n})};
  }

  // The layers `bases` (each "<base>.weight" [rows x in] and "<base>.bias") stacked into
  // one [bases.size()·rows x in] layer in the model's precision.
  // with_bias false: the model has no bias there (nn.Linear(bias=False)); none is read.
  kernels::DenseLayer dense(std::initializer_list<std::string_view> bases, std::size_t rows, std::size_t in,
                            bool with_bias = true) const {
    const std::size_t n = bases.size() * rows;
    if (arena_ != nullptr && arena_->prefilled()) {
      return kernels::DenseLayer::prefilled(precision_, n, in, isa_, *arena_);
    }
    std::vector<float> bias;
    bias.reserve(with_bias ? n : 0);
    for (const std::string_view base : bases) {
      if (!with_bias) break;
      const std::vector<float> b = floats(std::string(base) + ".bias", {rows});
      bias.insert(bias.end(), b.begin(), b.end());
    }
    switch (precision_) {
      case Precision::Float32: {
        kernels::PackedLinear packed(n, in, isa_, arena_);
        std::size_t row0 = 0;
        for (const std::string_view base : bases) {
          std::vector<float> scratch;
          const Tensor& w = weight(base, rows, in);
          packed.set_rows(
              row0, rows, weight_floats(base, w, rows, in, scratch),
              bias.empty() ? std::span<const float>() : std::span<const float>(bias).subspan(row0, rows));
          release_pages(w.data);
          row0 += rows;
        }
        return kernels::DenseLayer(std::move(packed));
      }
      case Precision::Int8: {
        kernels::QuantizedRows stacked;
        for (const std::string_view base : bases) {
          const Tensor& w = weight(base, rows, in);
          kernels::QuantizedRows q;
          if (w.dtype == Dtype::I8) {
            q = int8_rows(prefix_ + std::string(base) + ".weight", w, rows, in);
          } else {
            std::vector<float> scratch;
            q = kernels::quantize_rows(weight_floats(base, w, rows, in, scratch), rows, in);
          }
          stacked.values.insert(stacked.values.end(), q.values.begin(), q.values.end());
          stacked.scales.insert(stacked.scales.end(), q.scales.begin(), q.scales.end());
          release_pages(w.data);
        }
        kernels::QuantizedLinear layer(n, in, isa_, arena_);
        layer.set_rows(stacked, bias);
        return kernels::DenseLayer(std::move(layer));
      }
      case Precision::BFloat16:
        break;
    }
    std::vector<float> stacked;
    stacked.reserve(n * in);
    for (const std::string_view base : bases) {
      std::vector<float> scratch;
      const Tensor& w = weight(base, rows, in);
      const std::span<const float> v = weight_floats(base, w, rows, in, scratch);
      stacked.insert(stacked.end(), v.begin(), v.end());
      release_pages(w.data);
    }
    return kernels::DenseLayer::make(precision_, stacked, n, in, bias, isa_, arena_);
  }

  // A gated FFN input layer: "<base>.weight" [2·width x in] holds the activated rows, then the
  // gate rows (or, activated_first false, the other way round: GTE's [up | gate]);
  // "<base>.bias" is optional (JinaBERT's and GTE's have none).
  kernels::GatedDense gated(std::string_view base, std::size_t width, std::size_t in,
                            bool activated_first = true) const {
    if (arena_ != nullptr && arena_->prefilled()) {
      return kernels::GatedDense::prefilled(precision_, width, in, isa_, *arena_);
    }
    std::vector<float> scratch;
    const Tensor& w = weight(base, 2 * width, in);
    const std::span<const float> v = weight_floats(base, w, 2 * width, in, scratch);
    std::vector<float> bias;
    if (weights_.find(prefix_ + std::string(base) + ".bias") != nullptr) {
      bias = floats(std::string(base) + ".bias", {2 * width});
    }
    const std::span<const float> b(bias);
    const std::span<const float> first = v.first(width * in);
    const std::span<const float> second = v.subspan(width * in);
    const std::span<const float> b_first = b.empty() ? b : b.first(width);
    const std::span<const float> b_second = b.empty() ? b : b.subspan(width);
    kernels::GatedDense layer =
        activated_first
            ? kernels::GatedDense::make(precision_, first, second, width, in, b_first, b_second, isa_, arena_)
            : kernels::GatedDense::make(precision_, second, first, width, in, b_second, b_first, isa_,
                                        arena_);
    release_pages(w.data);
    return layer;
  }

  // A gated FFN input layer from two tensors: "<activated>.weight" and "<gate>.weight", [width x
  // in] each (NomicBERT's fc12 and fc11), with their biases when with_bias.
  kernels::GatedDense gated_pair(std::string_view activated, std::string_view gate, std::size_t width,
                                 std::size_t in, bool with_bias) const {
    if (arena_ != nullptr && arena_->prefilled()) {
      return kernels::GatedDense::prefilled(precision_, width, in, isa_, *arena_);
    }
    std::vector<float> scratch_a;
    std::vector<float> scratch_g;
    const Tensor& wa = weight(activated, width, in);
    const Tensor& wg = weight(gate, width, in);
    std::vector<float> bias_a;
    std::vector<float> bias_g;
    if (with_bias) {
      bias_a = floats(std::string(activated) + ".bias", {width});
      bias_g = floats(std::string(gate) + ".bias", {width});
    }
    kernels::GatedDense layer = kernels::GatedDense::make(
        precision_, weight_floats(activated, wa, width, in, scratch_a),
        weight_floats(gate, wg, width, in, scratch_g), width, in, bias_a, bias_g, isa_, arena_);
    release_pages(wa.data);
    release_pages(wg.data);
    return layer;
  }

  // A float32 layer whatever the model's precision (the classification heads: they run on
  // one row per sequence, so precision there costs nothing).
  kernels::PackedLinear linear(std::string_view base, std::size_t out, std::size_t in) const {
    std::vector<float> scratch;
    const Tensor& w = weight(base, out, in);
    kernels::PackedLinear packed(weight_floats(base, w, out, in, scratch), out, in,
                                 floats(std::string(base) + ".bias", {out}), isa_);
    release_pages(w.data);
    return packed;
  }

 private:
  const Tensor& weight(std::string_view base, std::size_t rows, std::size_t in) const {
    return weights_.require_weight(prefix_ + std::string(base) + ".weight", {rows, in});
  }

  // A weight tensor as floats: a view when it is aligned float32, else `scratch` filled
  // (widened, or dequantised from int8).
  std::span<const float> weight_floats(std::string_view base, const Tensor& t, std::size_t rows,
                                       std::size_t in, std::vector<float>& scratch) const {
    if (t.dtype == Dtype::I8) {
      scratch = dequantize(int8_rows(prefix_ + std::string(base) + ".weight", t, rows, in), in);
      return scratch;
    }
    if (is_aligned_float32(t)) return as_float32(t);
    scratch = to_float32(t);
    return scratch;
  }

  // An I8 tensor and its "<name>_scale" F32 [rows] as quantised rows.
  kernels::QuantizedRows int8_rows(const std::string& name, const Tensor& t, std::size_t rows,
                                   std::size_t in) const {
    const Tensor& scale = weights_.require(name + std::string(kInt8ScaleSuffix), {rows});
    kernels::QuantizedRows q;
    q.values.resize(rows * in);
    std::memcpy(q.values.data(), t.data.data(), q.values.size());
    q.scales = to_float32(scale);
    for (std::size_t j = 0; j < rows; ++j) {
      if (!std::isfinite(q.scales[j]) || q.scales[j] < 0.0F) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: tensor '{}{}' holds an invalid scale {}", weights_.source().string(),
                                name, kInt8ScaleSuffix, q.scales[j]));
      }
    }
    return q;
  }

  static std::vector<float> dequantize(const kernels::QuantizedRows& q, std::size_t in) {
    std::vector<float> out(q.values.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<float>(q.values[i]) * q.scales[i / in];
    }
    return out;
  }

  const ModelWeights& weights_;
  std::string prefix_;
  Isa isa_;
  Precision precision_;
  Arena* arena_;
};

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

// How a checkpoint names one encoder layer's tensors (after "<layer prefix><i>.").
struct LayerNames {
  std::string_view layer_prefix;
  std::string_view q, k, v, attn_out, attn_norm, ffn_in, ffn_out, ffn_norm;
  // When EncoderDims::gated_ffn: [2·intermediate x hidden] holding the activated rows, then the
  // gate rows; or, with ffn_gate set, the activated rows alone, ffn_gate the gate rows.
  std::string_view ffn_gated = {};
  std::string_view ffn_gate = {};
  std::string_view embedding_norm = "embeddings.LayerNorm";
  bool gate_first = false;  // ffn_gated holds [gate | activated] (GTE's up_gate_proj: [up | gate], act(gate))
  // q alone names Q, K and V stacked in one [3·hidden x hidden] tensor when k is empty.
};

// Which of a layer's nn.Linear modules have biases (NomicBERT's are configurable).
struct LayerBiases {
  bool attention = true;  // the QKV projection and the attention output
  bool ffn_in = true;
  bool ffn_out = true;
};

constexpr LayerNames kBertNames{
    "encoder.layer.",       "attention.self.query",   "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
    "intermediate.dense",   "output.dense",           "output.LayerNorm"};

constexpr LayerNames kDebertaNames{"encoder.layer.",          "attention.self.query_proj",
                                   "attention.self.key_proj", "attention.self.value_proj",
                                   "attention.output.dense",  "attention.output.LayerNorm",
                                   "intermediate.dense",      "output.dense",
                                   "output.LayerNorm"};

// JinaBertGLUMLP: gated_layers (no bias) = [activated | gate], wo, and the LayerNorm over the
// residual sum.
constexpr LayerNames kJinaBertGatedNames{"encoder.layer.",
                                         "attention.self.query",
                                         "attention.self.key",
                                         "attention.self.value",
                                         "attention.output.dense",
                                         "attention.output.LayerNorm",
                                         "",
                                         "mlp.wo",
                                         "mlp.layernorm",
                                         "mlp.gated_layers"};

// MPNetLayer: MPNetAttention holds the projections as attn.q/k/v/o and its own LayerNorm;
// MPNetIntermediate/MPNetOutput are BERT's.
constexpr LayerNames kMpnetNames{"encoder.layer.",     "attention.attn.q", "attention.attn.k",
                                 "attention.attn.v",   "attention.attn.o", "attention.LayerNorm",
                                 "intermediate.dense", "output.dense",     "output.LayerNorm"};

// NomicBertBlock: attn.Wqkv (Q, K, V stacked), attn.out_proj, norm1; the gated MLP's fc11
// (multiplied) and fc12 (through the activation: fc11(x) · act(fc12(x))), or fc1 for the plain
// MLP; fc2; norm2. The embeddings' LayerNorm is NomicBertModel.emb_ln.
constexpr LayerNames kNomicNames{"encoder.layers.", "attn.Wqkv", "",         "",
                                 "attn.out_proj",   "norm1",     "mlp.fc1",  "mlp.fc2",
                                 "norm2",           "mlp.fc12",  "mlp.fc11", "emb_ln"};

// NewLayer (GTE): attention.qkv_proj (Q, K, V stacked; or q_proj/k_proj/v_proj without
// pack_qkv), attention.o_proj, attn_ln; NewGatedMLP's up_gate_proj ([up | gate], no bias,
// act(gate) · up) and down_proj; mlp_ln.
constexpr LayerNames kGtePackedNames{"encoder.layer.",
                                     "attention.qkv_proj",
                                     "",
                                     "",
                                     "attention.o_proj",
                                     "attn_ln",
                                     "",
                                     "mlp.down_proj",
                                     "mlp_ln",
                                     "mlp.up_gate_proj",
                                     "",
                                     "embeddings.LayerNorm",
                                     true};
constexpr LayerNames kGteNames{"encoder.layer.",
                               "attention.q_proj",
                               "attention.k_proj",
                               "attention.v_proj",
                               "attention.o_proj",
                               "attn_ln",
                               "",
                               "mlp.down_proj",
                               "mlp_ln",
                               "mlp.up_gate_proj",
                               "",
                               "embeddings.LayerNorm",
                               true};

constexpr LayerNames kDistilBertNames{"transformer.layer.", "attention.q_lin",   "attention.k_lin",
                                      "attention.v_lin",    "attention.out_lin", "sa_layer_norm",
                                      "ffn.lin1",           "ffn.lin2",          "output_layer_norm"};

// Bytes of one encoder layer's dense layers, in the order read_encoder packs them.
std::size_t layer_arena_bytes(const EncoderDims& d, Precision precision, Isa isa) {
  const std::size_t h = d.hidden;
  const std::size_t i = d.intermediate;
  return kernels::DenseLayer::arena_bytes(precision, 3 * h, h, isa) +
         kernels::DenseLayer::arena_bytes(precision, h, h, isa) +
         (d.gated_ffn ? kernels::GatedDense::arena_bytes(precision, i, h, isa)
                      : kernels::DenseLayer::arena_bytes(precision, i, h, isa)) +
         kernels::DenseLayer::arena_bytes(precision, h, i, isa);
}

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

EncoderWeights read_encoder(const ModelWeights& weights, const std::string& prefix, Isa isa,
                            Precision precision, const EncoderDims& d, const LayerNames& names,
                            const RelativeSpec& relative, const LayerBiases& biases, ThreadPool* pool) {
  EncoderWeights w;
  const WeightReader r(weights, prefix, isa, precision);
  const std::size_t h = d.hidden;
  // The word embeddings (when converted) and then every layer get a fixed part of the
  // arena, so its bytes do not depend on the order the pool loads the layers in, and a
  // packed image of them can be mapped back.
  const std::size_t table_bytes =
      Arena::footprint<std::byte>(r.table_arena_bytes("embeddings.word_embeddings.weight", d.vocab, h));
  const std::size_t per_layer = Arena::footprint<std::byte>(layer_arena_bytes(d, precision, isa)) +
                                relative_arena_bytes(relative, d, isa);
  const std::size_t total = table_bytes + per_layer * d.layers;
  PackedArena packed = open_packed_arena(
      weights,
      fmt::format(
          "encoder prefix={} names={} vocab={} hidden={} intermediate={} layers={} table={} precision={} "
          "isa={} relative={}/{}{}{}{} ffn={}{} biases={}{}{}",
          prefix, names.layer_prefix, d.vocab, d.hidden, d.intermediate, d.layers, table_bytes,
          precision_name(precision), isa_name(isa), relative.table_rows, d.c2p ? "c2p" : "",
          d.p2c ? "p2c" : "", relative.norm ? "norm" : "", relative.shared ? "shared" : "",
          d.gated_ffn ? names.ffn_gated : names.ffn_in, names.ffn_gate, biases.attention ? 1 : 0,
          biases.ffn_in ? 1 : 0, biases.ffn_out ? 1 : 0),
      total);
  Arena table_arena = packed.arena->child(table_bytes);
  std::vector<Arena> layer_arenas;
  layer_arenas.reserve(d.layers);
  for (std::size_t i = 0; i < d.layers; ++i) layer_arenas.push_back(packed.arena->child(per_layer));

  w.word_embeddings = r.table("embeddings.word_embeddings.weight", d.vocab, h, table_arena);
  if (d.position_embeddings) {
    w.position_embeddings = r.float_table("embeddings.position_embeddings.weight", d.max_positions, h);
  }
  if (d.type_vocab > 0) {
    w.token_type_embeddings = r.float_table("embeddings.token_type_embeddings.weight", d.type_vocab, h);
  }
  w.embedding_norm = r.layer_norm(names.embedding_norm, h);
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
    layer.qkv = names.k.empty()
                    ? reader.dense({name(names.q)}, 3 * h, h, biases.attention)
                    : reader.dense({name(names.q), name(names.k), name(names.v)}, h, h, biases.attention);
    layer.attn_out = reader.dense({name(names.attn_out)}, h, h, biases.attention);
    layer.attn_norm = reader.layer_norm(name(names.attn_norm), h);
    if (d.gated_ffn && !names.ffn_gate.empty()) {
      layer.ffn_gated =
          reader.gated_pair(name(names.ffn_gated), name(names.ffn_gate), d.intermediate, h, biases.ffn_in);
    } else if (d.gated_ffn) {
      layer.ffn_gated = reader.gated(name(names.ffn_gated), d.intermediate, h, !names.gate_first);
    } else {
      layer.ffn_in = reader.dense({name(names.ffn_in)}, d.intermediate, h, biases.ffn_in);
    }
    layer.ffn_out = reader.dense({name(names.ffn_out)}, h, d.intermediate, biases.ffn_out);
    layer.ffn_norm = reader.layer_norm(name(names.ffn_norm), h);
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

// MPNetEncoder.compute_position_bias: relative_attention_bias ([buckets x heads]) at the bucket
// of each key-query distance j - i, computed once and added to every layer's scores after the
// 1/sqrt(head_dim) scaling (MPNetSelfAttention), so one distance table serves all layers.
kernels::DistanceBias mpnet_distance_bias(const ModelWeights& weights, const std::string& prefix,
                                          const EncoderDims& d, std::size_t buckets) {
  const std::vector<float> table = WeightReader(weights, prefix, Isa::Portable)
                                       .floats("encoder.relative_attention_bias.weight", {buckets, d.heads});
  return kernels::DistanceBias::make(d.heads, d.max_positions - 1, [&](std::size_t h, std::ptrdiff_t r) {
    return table[static_cast<std::size_t>(mpnet_relative_bucket(r)) * d.heads + h];
  });
}

}  // namespace

ModelKind EncoderModel::kind() const noexcept {
  if (!head) return ModelKind::Embedding;
  return head->labels() == 1 ? ModelKind::Reranker : ModelKind::Classifier;
}

std::string architecture_name(const ModelConfig& config, const std::filesystem::path& dir) {
  return std::string(find_architecture(config, dir).name);
}

std::string supported_architectures() {
  std::string out;
  for (const auto& a : kArchitectures) {
    if (!out.empty()) out += ", ";
    out += a.name;
  }
  return out;
}

std::unique_ptr<EncoderModel> load_encoder_model(const std::filesystem::path& dir, ThreadPool* pool, Isa isa,
                                                 Precision precision) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error(ErrorKind::NotFound, fmt::format("model folder {} does not exist", dir.string()));
  }
  ModelConfig config = read_model_config(dir / "config.json");
  const ArchitectureName& arch = find_architecture(config, dir);
  const bool jina = arch.architecture == Architecture::JinaBert;
  const bool gte = arch.architecture == Architecture::Gte;
  if (config.position_embedding_type != "absolute" && !(jina && config.position_embedding_type == "alibi") &&
      !(gte && config.position_embedding_type == "rope")) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: position_embedding_type '{}' is not supported ({})",
                            (dir / "config.json").string(), config.position_embedding_type,
                            jina  ? "absolute or alibi"
                            : gte ? "absolute or rope"
                                  : "absolute only; alibi with the JinaBert architectures, rope with GTE's"));
  }

  EncoderDims dims;
  dims.hidden = config.hidden_size;
  dims.layers = config.num_hidden_layers;
  dims.heads = config.num_attention_heads;
  dims.intermediate = config.intermediate_size;
  dims.vocab = config.vocab_size;
  dims.max_positions = config.max_position_embeddings;
  dims.type_vocab = arch.architecture == Architecture::DistilBert ? 0 : config.type_vocab_size;
  dims.layer_norm_eps = static_cast<float>(config.layer_norm_eps);
  const bool nomic = arch.architecture == Architecture::NomicBert;
  if (!nomic) dims.ffn_activation = activation_named(config.hidden_act, "hidden_act", dir);
  RelativeSpec relative;
  LayerBiases biases;
  if (nomic) {
    // NomicBertBlock: SwiGLU (fc11(x) · silu(fc12(x))) or GEGLU (exact GELU), or NomicBertMLP's
    // plain fc1-GELU-fc2; biases as the config says (nomic-embed-text has none).
    const std::string& act = config.hidden_act;
    if (act == "swiglu" || act == "geglu") {
      dims.gated_ffn = true;
      dims.ffn_activation = act == "swiglu" ? kernels::Activation::Silu : kernels::Activation::Gelu;
    } else if (act == "gelu") {
      dims.ffn_activation = kernels::Activation::Gelu;
    } else {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: activation_function '{}' is not supported (swiglu, geglu, gelu)",
                              (dir / "config.json").string(), act));
    }
    biases = {config.nomic.qkv_proj_bias, config.nomic.mlp_fc1_bias, config.nomic.mlp_fc2_bias};
    // NomicBertAttention: rotary_emb_dim = head_dim · rotary_emb_fraction; without rotary,
    // NomicBertEmbeddings has an absolute position table of n_positions rows.
    const double rotated = static_cast<double>(config.head_dim()) * config.rotary.fraction;
    if (rotated != std::floor(rotated) || static_cast<std::size_t>(rotated) % 2 != 0) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: rotary_emb_fraction {} of the head size {} is not an even number of dimensions",
                      (dir / "config.json").string(), config.rotary.fraction, config.head_dim()));
    }
    dims.rotary_dims = static_cast<std::size_t>(rotated);
    dims.position_embeddings = dims.rotary_dims == 0;
    dims.rotary_base = config.rotary.base;
    dims.rotary_interleaved = config.rotary.interleaved;
    dims.rotary_ntk_factor = config.rotary.scaling_factor;
    dims.rotary_max_trained = config.rotary.max_trained_positions;
  }
  if (arch.architecture == Architecture::DebertaV2) {
    const ModelConfig::Deberta& db = config.deberta;
    dims.position_embeddings = db.position_biased_input;
    dims.c2p = db.c2p;
    dims.p2c = db.p2c;
    if (db.relative_attention && (db.c2p || db.p2c)) {
      // DisentangledSelfAttention: the table has 2·span rows, span = position_buckets when
      // set, else max_relative_positions (which defaults to max_position_embeddings).
      const std::int64_t max_relative = db.max_relative_positions < 1
                                            ? static_cast<std::int64_t>(config.max_position_embeddings)
                                            : db.max_relative_positions;
      const std::int64_t span = db.position_buckets > 0 ? db.position_buckets : max_relative;
      dims.relative_rows = relative_rows(dims.max_positions - 1, span, db.position_buckets, max_relative);
      relative.table_rows = 2 * static_cast<std::size_t>(span);
      relative.norm = db.norm_rel_ebd;
      relative.shared = db.share_att_key;
    }
  }
  if (jina) {
    // JinaBertEmbeddings has a position table only when the positions are absolute; with ALiBi
    // the encoder adds -slope·|i - j| to each head's scores instead (JinaBertEncoder's alibi).
    if (config.position_embedding_type == "alibi") {
      dims.position_embeddings = false;
      dims.alibi_slopes = kernels::alibi_slopes(dims.heads);
    }
    // JinaBertLayer: feed_forward_type ending in "glu" is the gated JinaBertGLUMLP (GEGLU: nn.GELU,
    // exact; ReGLU: ReLU), anything else BERT's intermediate/output pair.
    const std::string& ff = config.feed_forward_type;
    if (ff == "geglu" || ff == "reglu") {
      dims.gated_ffn = true;
      dims.ffn_activation = ff == "geglu" ? kernels::Activation::Gelu : kernels::Activation::Relu;
    } else if (ff != "original") {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: feed_forward_type '{}' is not supported (original, geglu, reglu)",
                              (dir / "config.json").string(), ff));
    }
  }
  if (gte) {
    // NewModel: post-LN layers with a gated MLP (act(gate) · up, no bias on up_gate_proj), rotary
    // positions over the whole head from rope_theta (NewEmbeddings._init_rope), or an absolute
    // table; type_vocab_size 0 means no token-type table.
    dims.gated_ffn = true;
    biases = {true, false, true};
    if (config.position_embedding_type == "rope") {
      dims.position_embeddings = false;
      dims.rotary_dims = config.head_dim();
      dims.rotary_base = config.rotary.base;
      if (config.rotary.fixed_ntk_factor) {
        // NTKScalingRotaryEmbedding (mixed_b None), which applies at every length:
        // inv_freq = 1 / ((θ·f)^(2i/d)) / f^(2/d), float32 tensors and Python floats as upstream.
        const double f = *config.rotary.fixed_ntk_factor;
        const auto d = static_cast<double>(dims.rotary_dims);
        dims.rotary_inv_freq = kernels::rotary_inv_freq(config.rotary.base * f, dims.rotary_dims);
        const auto divisor = static_cast<float>(std::pow(f, 2.0 / d));
        for (float& v : dims.rotary_inv_freq) v /= divisor;
      }
    }
  }
  if (arch.architecture == Architecture::Roberta || arch.architecture == Architecture::MPNet) {
    // create_position_ids_from_input_ids: positions from padding_idx + 1 over the non-padding
    // tokens. RobertaEmbeddings' padding_idx is pad_token_id; MPNetEmbeddings fixes it at 1.
    const auto padding_idx = arch.architecture == Architecture::MPNet
                                 ? std::uint32_t{1}
                                 : static_cast<std::uint32_t>(config.pad_token_id.value_or(1));
    dims.padding_idx = padding_idx;
    dims.position_offset = std::size_t{padding_idx} + 1;
  }
  if (arch.architecture == Architecture::MPNet) {
    dims.type_vocab = 0;  // MPNetEmbeddings: word + position only
    if (dims.max_positions <= dims.position_offset) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: max_position_embeddings is {}, too small for MPNet's positions, which start at 2",
                      (dir / "config.json").string(), dims.max_positions));
    }
  }

  auto weights = std::make_unique<ModelWeights>(ModelWeights::open_dir(dir));
  // Checkpoints saved from the *ForSequenceClassification class prefix the encoder's
  // tensors with the base model's name; base-model checkpoints usually do not.
  const std::string base_prefix =
      arch.architecture == Architecture::Bert || arch.architecture == Architecture::JinaBert ? "bert."
      : arch.architecture == Architecture::Roberta                                           ? "roberta."
      : arch.architecture == Architecture::DebertaV2                                         ? "deberta."
      : arch.architecture == Architecture::MPNet                                             ? "mpnet."
      : arch.architecture == Architecture::NomicBert                                         ? "bert."
      : gte                                                                                  ? "new."
                                                                                             : "distilbert.";
  const std::string prefix =
      weights->find("embeddings.word_embeddings.weight") != nullptr ? std::string() : base_prefix;
  const WeightReader encoder_reader(*weights, prefix, isa);
  const LayerNames& names = arch.architecture == Architecture::DistilBert  ? kDistilBertNames
                            : arch.architecture == Architecture::DebertaV2 ? kDebertaNames
                            : arch.architecture == Architecture::MPNet     ? kMpnetNames
                            : nomic                                        ? kNomicNames
                            : gte            ? (config.gte_packed_qkv ? kGtePackedNames : kGteNames)
                            : dims.gated_ffn ? kJinaBertGatedNames
                                             : kBertNames;
  if (jina && weights->find(prefix + "encoder.layer.0.attention.self.layer_norm_q.weight") != nullptr) {
    // jina-bert-v2-qk-post-norm (the code embedders) normalises queries and keys: not run here.
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: this JinaBERT checkpoint has query/key LayerNorms "
                    "(attention.self.layer_norm_q, the qk-post-norm variant), which Warden does not run",
                    weights->source().string()));
  }
  EncoderWeights encoder_weights =
      read_encoder(*weights, prefix, isa, precision, dims, names, relative, biases, pool);
  if (arch.architecture == Architecture::MPNet) {
    encoder_weights.distance_bias =
        mpnet_distance_bias(*weights, prefix, dims, config.relative_attention_num_buckets);
  }

  std::optional<ClassifierHead> head;
  if (arch.classifier) {
    const std::size_t labels = config.num_labels();
    const std::size_t h = dims.hidden;
    const WeightReader root(*weights, "", isa);
    ClassifierHead c;
    switch (arch.architecture) {
      case Architecture::Gte:  // NewForSequenceClassification: NewPooler (dense, tanh) and the classifier
        c.dense = encoder_reader.linear("pooler.dense", h, h);
        c.activation = kernels::Activation::Tanh;
        c.out = root.linear("classifier", labels, h);
        break;
      case Architecture::NomicBert:  // no classifier class is listed for it (kArchitectures)
        throw Error(ErrorKind::Internal, "NomicBERT has no classification head here");
      case Architecture::Bert:
      case Architecture::JinaBert:  // JinaBertForSequenceClassification: the same pooler and classifier
        c.dense = encoder_reader.linear("pooler.dense", h, h);
        c.activation = kernels::Activation::Tanh;
        c.out = root.linear("classifier", labels, h);
        break;
      case Architecture::Roberta:
      case Architecture::MPNet:  // MPNetClassificationHead: the same dense-tanh-out_proj on <s>
        c.dense = root.linear("classifier.dense", h, h);
        c.activation = kernels::Activation::Tanh;
        c.out = root.linear("classifier.out_proj", labels, h);
        break;
      case Architecture::DebertaV2:
        // ContextPooler: dense and pooler_hidden_act on the first token, then the classifier.
        c.dense = root.linear("pooler.dense", h, h);
        c.activation = activation_named(config.deberta.pooler_hidden_act, "pooler_hidden_act", dir);
        c.out = root.linear("classifier", labels, h);
        break;
      case Architecture::DistilBert:
        c.dense = root.linear("pre_classifier", h, h);
        c.activation = kernels::Activation::Relu;
        c.out = root.linear("classifier", labels, h);
        break;
    }
    head = std::move(c);
  }

  auto model = std::make_unique<EncoderModel>(EncoderModel{dir,
                                                           std::move(config),
                                                           arch.architecture,
                                                           std::move(weights),
                                                           Encoder(dims, std::move(encoder_weights)),
                                                           std::move(head),
                                                           {},
                                                           {}});
  const auto modules_path = dir / "modules.json";
  if (std::filesystem::exists(modules_path)) {
    const StModules modules = read_st_modules(modules_path);
    if (const StModule* p = modules.find("Pooling"); p != nullptr) {
      model->pooling = read_pooling_config(dir / p->path / "config.json");
    }
  }
  if (std::filesystem::exists(dir / "config_sentence_transformers.json")) {
    model->st = read_st_config(dir / "config_sentence_transformers.json");
  }
#if defined(__GLIBC__)
  // Converting to bf16/int8 frees megabytes of temporaries that glibc keeps in its heaps
  // (its mmap threshold rises after the first large free); give them back, so that resident
  // memory is the model's.
  ::malloc_trim(0);
#endif
  return model;
}

}  // namespace warden::model

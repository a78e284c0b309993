#include "model/onnx/encoder_graph.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/onnx/passes/fold_dequantize.hpp"
#include "model/onnx/passes/fold_float_casts.hpp"
#include "model/onnx/passes/fuse_attention.hpp"
#include "model/onnx/passes/fuse_attention_mask.hpp"
#include "model/onnx/passes/fuse_bias_gelu.hpp"
#include "model/onnx/passes/fuse_dense.hpp"
#include "model/onnx/passes/fuse_embeddings.hpp"
#include "model/onnx/passes/fuse_gelu.hpp"
#include "model/onnx/passes/fuse_gemm.hpp"
#include "model/onnx/passes/fuse_layer_norm.hpp"
#include "model/onnx/passes/fuse_ort_fused_ops.hpp"
#include "model/onnx/passes/fuse_pooling.hpp"
#include "model/onnx/passes/fuse_quantized_dense.hpp"
#include "model/onnx/passes/fuse_skip_layer_norm.hpp"
#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The passes in the order their patterns nest: a float16 file's Casts between float types go
// first (the graph then reads as its float32 export); quantised constants folded next (the tables the
// embeddings gather from); ORT's fused ops read as they are (independent of the rest); LayerNorm and GELU
// from their decompositions (the embeddings and the residuals end in a LayerNorm); the embeddings before the
// residual LayerNorms (their sum is an Add too); the quantised dense layers before the others (whose pass
// takes their bias Adds); dense layers before ORT's BiasGelu (whose bias goes back into them) and before
// attention (which reads the rows of its inputs off them).
void reduce_graph(RewriteGraph& g) {
  fold_float_casts(g);
  fold_dequantize(g);
  fuse_ort_embed_layer_norm(g);
  fuse_ort_attention(g);
  fuse_layer_norm(g);
  fuse_gelu(g);
  fuse_embeddings(g);
  fuse_skip_layer_norm(g);
  fuse_quantized_dense(g);
  fuse_dense(g);
  fuse_gemm(g);
  fuse_bias_gelu(g);
  fuse_attention_mask(g);
  fuse_attention(g);
  fuse_mean_pooling(g);
  fuse_l2_normalize(g);
  g.remove_unused();
}

namespace {

class Reader {
 public:
  explicit Reader(const RewriteGraph& g) : g_(g), placed_(g.nodes.size(), false) {}

  [[nodiscard]] std::vector<std::size_t> readers(std::string_view value) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const auto& in = g_.nodes[i].inputs;
      if (std::find(in.begin(), in.end(), value) != in.end()) out.push_back(i);
    }
    return out;
  }

  static bool is(const Node& n, std::string_view op, std::string_view domain) {
    return n.op_type == op && n.domain == domain;
  }

  // The one node reading `value`, when it is `op` in `domain`; placed.
  const Node* sole_reader(std::string_view value, std::string_view op, std::string_view domain) {
    const std::vector<std::size_t> r = readers(value);
    if (r.size() != 1 || !is(g_.nodes[r[0]], op, domain) || placed_[r[0]]) return nullptr;
    placed_[r[0]] = true;
    return &g_.nodes[r[0]];
  }

  // The node producing `value`, when it is `op` in `domain`; placed.
  const Node* producer(std::string_view value, std::string_view op, std::string_view domain) {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const auto& out = g_.nodes[i].outputs;
      if (std::find(out.begin(), out.end(), value) == out.end()) continue;
      if (!is(g_.nodes[i], op, domain)) return nullptr;
      placed_[i] = true;
      return &g_.nodes[i];
    }
    return nullptr;
  }

  const Tensor* constant(const Node& n, std::size_t input) const {
    return input < n.inputs.size() ? g_.constant(n.inputs[input]) : nullptr;
  }

  bool is_input(std::string_view value) const {
    return std::any_of(g_.inputs.begin(), g_.inputs.end(),
                       [&](const ValueInfo& v) { return v.name == value; });
  }
  bool is_output(std::string_view value) const {
    return std::any_of(g_.outputs.begin(), g_.outputs.end(),
                       [&](const ValueInfo& v) { return v.name == value; });
  }

  // The error for a graph read only `so_far`: the first node not placed, or `why` when all were.
  [[noreturn]] void fail(const std::string& so_far, const std::string& why = {}) const {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      if (placed_[i]) continue;
      const Node& n = g_.nodes[i];
      throw Error(
          ErrorKind::Unsupported,
          fmt::format("{}: the graph does not reduce to an encoder Warden runs: node '{}' ({} in {}) is "
                      "not part of one{}; read so far: {}",
                      g_.source, n.name, n.op_type, n.domain.empty() ? "ai.onnx" : n.domain,
                      why.empty() ? "" : fmt::format(" ({})", why), so_far));
    }
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: the graph does not reduce to an encoder Warden runs: {}; read so far: {}",
                            g_.source, why, so_far));
  }

  [[nodiscard]] bool all_placed() const {
    return std::all_of(placed_.begin(), placed_.end(), [](bool p) { return p; });
  }

  const RewriteGraph& graph() const noexcept { return g_; }

 private:
  const RewriteGraph& g_;
  std::vector<bool> placed_;
};

std::optional<DenseTensors> dense_tensors(const Reader& r, const Node& dense) {
  const Tensor* w = r.constant(dense, 1);
  const bool has_bias = dense.inputs.size() > 2 && !dense.inputs[2].empty();
  const Tensor* b = has_bias ? r.constant(dense, 2) : nullptr;
  const Tensor* s = dense.inputs.size() > 3 ? r.constant(dense, 3) : nullptr;
  if (w == nullptr || w->dims.size() != 2 || (has_bias && b == nullptr) ||
      (dense.inputs.size() > 3 && s == nullptr)) {
    return std::nullopt;
  }
  const Attribute* out_in = dense.attribute("out_in");
  DenseTensors d{*w, std::nullopt, std::nullopt, out_in != nullptr && out_in->i != 0};
  if (b != nullptr && (b->dims.size() != 1 || b->dims[0] != d.outputs())) return std::nullopt;
  if ((w->type == DataType::Int8) != (s != nullptr)) return std::nullopt;
  if (b != nullptr) d.bias = *b;
  if (s != nullptr) d.scale = *s;
  return d;
}

std::optional<NormTensors> norm_tensors(const Reader& r, const Node& n, std::size_t gamma) {
  const Tensor* g = r.constant(n, gamma);
  const Tensor* b = r.constant(n, gamma + 1);
  const Attribute* eps = n.attribute("epsilon");
  if (g == nullptr || b == nullptr || g->dims.size() != 1 || b->dims != g->dims) return std::nullopt;
  return NormTensors{*g, *b, eps != nullptr ? eps->f : 1e-5F};
}

// The residual LayerNorm adding `sublayer` to `residual`.
// ORT's SkipLayerNormalization may carry the sublayer's bias as its fifth input: it goes into the
// dense layer `d` (which then must have none).
const Node* residual_norm(Reader& r, const std::string& sublayer, const std::string& residual,
                          DenseTensors& d) {
  const Node* s = r.sole_reader(sublayer, "SkipLayerNormalization", kMicrosoftDomain);
  if (s == nullptr || s->inputs.size() < 4 || s->inputs.size() > 5) return nullptr;
  const bool pair = (s->inputs[0] == sublayer && s->inputs[1] == residual) ||
                    (s->inputs[1] == sublayer && s->inputs[0] == residual);
  if (!pair) return nullptr;
  if (s->inputs.size() == 5 && !s->inputs[4].empty()) {
    const Tensor* bias = r.constant(*s, 4);
    if (bias == nullptr || d.bias || bias->dims != std::vector<std::int64_t>{d.outputs()}) return nullptr;
    d.bias = *bias;
  }
  return s;
}

// Whether `n` is Gather(x, 0, axis 1): the first token of each sequence.
bool first_token(const Reader& r, const Node& n) {
  const Attribute* axis = n.attribute("axis");
  const Tensor* index = n.inputs.size() == 2 ? r.graph().constant(n.inputs[1]) : nullptr;
  return Reader::is(n, "Gather", "") && axis != nullptr && axis->i == 1 && index != nullptr &&
         index->dims.empty() && r.graph().scalar(n.inputs[1]) == 0.0;
}

// A *ForSequenceClassification head on the hidden states `x`: Gather(x, 0, axis 1) (the first
// token), a dense layer, tanh or ReLU, the dense layer to the labels, a graph output.
std::optional<ClassifierTensors> read_classifier(Reader& r, const std::string& x) {
  const Node* first = r.sole_reader(x, "Gather", "");
  if (first == nullptr || !first_token(r, *first)) return std::nullopt;
  ClassifierTensors c;
  const Node* dense = r.sole_reader(first->outputs[0], "Dense", kWardenDomain);
  const auto dense_t = dense != nullptr ? dense_tensors(r, *dense) : std::nullopt;
  if (!dense_t) return std::nullopt;
  c.dense = *dense_t;
  const std::vector<std::size_t> act = r.readers(dense->outputs[0]);
  if (act.size() != 1) return std::nullopt;
  const Node& a = r.graph().nodes[act[0]];
  if (!a.domain.empty() || (a.op_type != "Tanh" && a.op_type != "Relu")) return std::nullopt;
  c.activation = a.op_type == "Tanh" ? "tanh" : "relu";
  const Node* activation = r.sole_reader(dense->outputs[0], a.op_type, "");
  const Node* out =
      activation != nullptr ? r.sole_reader(activation->outputs[0], "Dense", kWardenDomain) : nullptr;
  const auto out_t = out != nullptr ? dense_tensors(r, *out) : std::nullopt;
  if (!out_t || !r.is_output(out->outputs[0]) || !r.readers(out->outputs[0]).empty()) return std::nullopt;
  c.out = *out_t;
  c.logits = out->outputs[0];
  return c;
}

// A SentenceTransformer's pooled output of the hidden states `x`: warden.MeanPooling(x, mask) or
// the first token, then warden.L2Normalize or not, a graph output.
std::optional<PooledOutput> read_pooled(Reader& r, const std::string& x, std::string& attention_mask) {
  const std::vector<std::size_t> readers = r.readers(x);
  if (readers.size() != 1) return std::nullopt;
  const Node& n = r.graph().nodes[readers[0]];
  PooledOutput p;
  if (Reader::is(n, "MeanPooling", kWardenDomain)) {
    if (n.inputs.size() != 2 || !r.is_input(n.inputs[1]) ||
        (!attention_mask.empty() && attention_mask != n.inputs[1])) {
      return std::nullopt;
    }
    attention_mask = n.inputs[1];
    p.mode = "mean";
  } else if (first_token(r, n)) {
    p.mode = "cls";
  } else {
    return std::nullopt;
  }
  const Node* pooling = r.sole_reader(x, n.op_type, n.domain);
  if (pooling == nullptr) return std::nullopt;
  std::string out = pooling->outputs[0];
  if (const Node* norm = r.sole_reader(out, "L2Normalize", kWardenDomain)) {
    p.normalized = true;
    out = norm->outputs[0];
  }
  if (!r.is_output(out) || !r.readers(out).empty()) return std::nullopt;
  p.output = out;
  return p;
}

}  // namespace

EncoderTensors read_encoder_graph(const Model& model, std::string_view source) {
  RewriteGraph g = make_rewrite_graph(model, source);
  reduce_graph(g);
  Reader r(g);
  EncoderTensors e;

  const Node* embeddings = nullptr;
  for (const Node& n : g.nodes) {
    if (Reader::is(n, "Embeddings", kWardenDomain)) {
      if (embeddings != nullptr) r.fail("nothing", "two embedding layers");
      embeddings = &n;
    }
  }
  if (embeddings == nullptr) r.fail("nothing", "no embedding layer recognised");
  r.producer(embeddings->outputs[0], "Embeddings", kWardenDomain);
  const auto table = [&](std::size_t i) { return r.constant(*embeddings, i); };
  const auto padding = embeddings->attribute("padding_idx");
  const auto zeros = embeddings->attribute("zero_types");
  e.input_ids = embeddings->inputs[0];
  e.token_type_ids = embeddings->inputs[1];
  if (!r.is_input(e.input_ids) || table(2) == nullptr || table(3) == nullptr || table(5) == nullptr ||
      table(6) == nullptr || padding == nullptr || zeros == nullptr) {
    r.fail("nothing", "the embedding layer is incomplete");
  }
  e.word = *table(2);
  e.position = *table(3);
  if (table(4) != nullptr) e.type = *table(4);
  e.zero_types = zeros->i != 0;
  e.padding_idx = padding->i;
  e.embedding_norm = *norm_tensors(r, *embeddings, 5);

  std::string x = embeddings->outputs[0];
  const auto so_far = [&] {
    return fmt::format("the embeddings and {} layer(s), up to value '{}'", e.layers.size(), x);
  };
  for (;;) {
    // The attention whose queries, keys and values are dense layers of x, or which projects x
    // itself (ORT's fused Attention, packed_qkv).
    const auto packed = [](const Node& n) {
      const Attribute* a = n.attribute("packed_qkv");
      return a != nullptr && a->i != 0;
    };
    const Node* attention = nullptr;
    for (const std::size_t i : r.readers(x)) {
      const Node& n = g.nodes[i];
      if (Reader::is(n, "Attention", kWardenDomain) && packed(n)) attention = &n;
      if (!Reader::is(n, "Dense", kWardenDomain)) continue;
      for (const std::size_t j : r.readers(n.outputs[0])) {
        if (Reader::is(g.nodes[j], "Attention", kWardenDomain)) attention = &g.nodes[j];
      }
      if (attention != nullptr) break;
    }
    if (attention == nullptr) break;
    EncoderLayerTensors layer;
    r.producer(attention->outputs[0], "Attention", kWardenDomain);
    if (attention->inputs.size() < 3) r.fail(so_far(), "an attention without queries, keys and values");
    const bool packed_qkv = packed(*attention);
    if (packed_qkv) {
      const Tensor* w = r.constant(*attention, 1);
      const Tensor* b = r.constant(*attention, 2);
      if (attention->inputs[0] != x || w == nullptr || b == nullptr) {
        r.fail(so_far(), "the fused attention's projection is not of its input");
      }
      layer.qkv = DenseTensors{*w, *b, std::nullopt, false};
    } else {
      DenseTensors* qkv[3] = {&layer.query, &layer.key, &layer.value};
      for (std::size_t k = 0; k < 3; ++k) {
        const Node* d = r.producer(attention->inputs[k], "Dense", kWardenDomain);
        const auto t = d != nullptr ? dense_tensors(r, *d) : std::nullopt;
        if (d == nullptr || d->inputs[0] != x || r.readers(attention->inputs[k]).size() != 1 || !t) {
          r.fail(so_far(), "the attention's queries, keys and values are not dense layers of its input");
        }
        *qkv[k] = *t;
      }
    }
    if (attention->inputs.size() > 3) {
      std::string mask = attention->inputs[3];
      if (const Node* m = r.producer(mask, "AttentionMask", kWardenDomain)) mask = m->inputs[0];
      if (!r.is_input(mask) || (!e.attention_mask.empty() && e.attention_mask != mask)) {
        r.fail(so_far(), "the attention is masked by something else than the attention_mask input");
      }
      e.attention_mask = mask;
    }
    const Attribute* heads = attention->attribute("num_heads");
    const Attribute* scale = attention->attribute("scale");
    layer.heads = heads != nullptr ? heads->i : 0;
    layer.scale = scale != nullptr ? scale->f : 0.0F;
    const Node* out = r.sole_reader(attention->outputs[0], "Dense", kWardenDomain);
    auto out_t = out != nullptr ? dense_tensors(r, *out) : std::nullopt;
    const Node* norm1 = out_t ? residual_norm(r, out->outputs[0], x, *out_t) : nullptr;
    const auto norm1_t = norm1 != nullptr ? norm_tensors(r, *norm1, 2) : std::nullopt;
    if (!norm1_t || r.readers(x).size() != (packed_qkv ? 2U : 4U)) {
      r.fail(so_far(), "the attention's output is not a residual LayerNorm");
    }
    layer.attention_out = *out_t;
    layer.attention_norm = *norm1_t;
    const std::string a = norm1->outputs[0];
    const Node* ffn_in = nullptr;
    for (const std::size_t i : r.readers(a)) {
      if (Reader::is(g.nodes[i], "Dense", kWardenDomain))
        ffn_in = r.producer(g.nodes[i].outputs[0], "Dense", kWardenDomain);
    }
    const auto ffn_in_t = ffn_in != nullptr ? dense_tensors(r, *ffn_in) : std::nullopt;
    if (!ffn_in_t || r.readers(a).size() != 2) r.fail(so_far(), "no feed-forward layer after the attention");
    layer.ffn_in = *ffn_in_t;
    const std::vector<std::size_t> act = r.readers(ffn_in->outputs[0]);
    const Node* activation = nullptr;
    if (act.size() == 1) {
      const Node& n = g.nodes[act[0]];
      if (Reader::is(n, "Gelu", kMicrosoftDomain)) layer.activation = "gelu";
      if (Reader::is(n, "Relu", "")) layer.activation = "relu";
      if (!layer.activation.empty()) activation = r.sole_reader(ffn_in->outputs[0], n.op_type, n.domain);
    }
    if (activation == nullptr) r.fail(so_far(), "the feed-forward layer's activation is not one Warden runs");
    const Node* ffn_out = r.sole_reader(activation->outputs[0], "Dense", kWardenDomain);
    auto ffn_out_t = ffn_out != nullptr ? dense_tensors(r, *ffn_out) : std::nullopt;
    const Node* norm2 = ffn_out_t ? residual_norm(r, ffn_out->outputs[0], a, *ffn_out_t) : nullptr;
    const auto norm2_t = norm2 != nullptr ? norm_tensors(r, *norm2, 2) : std::nullopt;
    if (!norm2_t) r.fail(so_far(), "the feed-forward output is not a residual LayerNorm");
    layer.ffn_out = *ffn_out_t;
    layer.ffn_norm = *norm2_t;
    e.layers.push_back(std::move(layer));
    x = norm2->outputs[0];
  }
  if (e.layers.empty()) r.fail(so_far(), "no encoder layer recognised");
  if (r.is_output(x)) e.hidden_state = x;
  if (const std::vector<std::size_t> next = r.readers(x); !next.empty()) {
    // A classification head (the first token into a dense layer), or a pooled output.
    const Node& n = g.nodes[next.front()];
    const bool head = next.size() == 1 && first_token(r, n) && r.readers(n.outputs[0]).size() == 1 &&
                      Reader::is(g.nodes[r.readers(n.outputs[0]).front()], "Dense", kWardenDomain);
    if (head) {
      e.classifier = read_classifier(r, x);
    } else {
      e.pooled = read_pooled(r, x, e.attention_mask);
    }
    if (!e.classifier && !e.pooled) {
      r.fail(so_far(), "what follows the last layer is neither a classification head nor a pooled output");
    }
  }
  if (e.hidden_state.empty() && !e.classifier && !e.pooled) {
    r.fail(so_far(), "the last layer's output is not a graph output");
  }
  if (!r.all_placed()) r.fail(so_far());
  return e;
}

}  // namespace warden::model::onnx

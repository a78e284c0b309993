#include "model/onnx/passes/fuse_attention.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/onnx/shape_values.hpp"

namespace warden::model::onnx {

namespace {

class Pattern {
 public:
  explicit Pattern(const RewriteGraph& g) : g_(g) {}

  // The default-domain `op` producing `value`, read by one node besides Shape nodes (the shape
  // computations of the pattern's own Reshapes, which go with it); remembered as part of the
  // match. (The driver checks that the graph is still whole after the rewrite.)
  const Node* take(const std::string& value, std::string_view op, std::string_view domain = "") {
    const std::size_t readers = readers_besides_shapes(g_, value);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.outputs.size() == 1 && n.outputs[0] == value) {
        if (n.op_type != op || n.domain != domain || readers != 1) return nullptr;
        nodes_.push_back(i);
        return &n;
      }
    }
    return nullptr;
  }

  static bool perm_is(const Node& transpose, const std::vector<std::int64_t>& perm) {
    const Attribute* p = transpose.attribute("perm");
    return p != nullptr && p->ints == perm;
  }

  // Whether `d` is dimension `axis` of x, or of the input of the dense layer that made x (the
  // same rows: DistilBERT reads the batch off the hidden state, query.size()).
  bool leading(const SymbolicDim& d, const std::string& x, std::int64_t axis) const {
    if (d == SymbolicDim::dim(x, axis)) return true;
    const Node* n = g_.producer(x);
    return n != nullptr && n->op_type == "Dense" && n->domain == kWardenDomain &&
           d == SymbolicDim::dim(n->inputs[0], axis);
  }

  // x from split(x) = Transpose(Reshape(x, [x.0, x.1 | -1, H, D]), perm), with H and D.
  std::optional<std::string> split(const std::string& value, const std::vector<std::int64_t>& perm,
                                   std::int64_t& heads, std::int64_t& head_dim) {
    const Node* t = take(value, "Transpose");
    if (t == nullptr || !perm_is(*t, perm)) return std::nullopt;
    const Node* r = take(t->inputs[0], "Reshape");
    if (r == nullptr || r->inputs.size() != 2) return std::nullopt;
    const std::string& x = r->inputs[0];
    const auto shape = reshape_target(g_, *r);
    if (!shape || shape->elements.size() != 4 || !leading(shape->elements[0], x, 0) ||
        (!leading(shape->elements[1], x, 1) && shape->elements[1] != SymbolicDim::number(-1)) ||
        !shape->elements[2].constant || !shape->elements[3].constant) {
      return std::nullopt;
    }
    const std::int64_t h = *shape->elements[2].constant;
    const std::int64_t d = *shape->elements[3].constant;
    if (h <= 0 || d <= 0 || (heads != 0 && (h != heads || d != head_dim))) return std::nullopt;
    heads = h;
    head_dim = d;
    return x;
  }

  // The 0/1 key mask graph input `m` behind DistilBERT's masked_fill condition:
  // Cast(Expand(Reshape(Equal(m, 0), [b, 1, 1, k]), shape), bool), the Cast optional. The
  // exporter may share these nodes between layers: a node read elsewhere too stays (it is
  // dropped once the last layer's attention no longer reads it).
  std::optional<std::string> key_padding(std::string value) {
    const auto visit = [&](const std::string& v, std::string_view op) {
      const Node* n = g_.producer(v);
      if (n == nullptr || n->op_type != op || !n->domain.empty()) return static_cast<const Node*>(nullptr);
      return readers_besides_shapes(g_, v) == 1 ? take(v, op) : n;
    };
    for (const Node* n = g_.producer(value); n != nullptr && n->op_type != "Equal"; n = g_.producer(value)) {
      if (n->op_type != "Cast" && n->op_type != "Expand" && n->op_type != "Reshape") return std::nullopt;
      if (visit(value, n->op_type) == nullptr) return std::nullopt;
      if (n->op_type == "Reshape") {
        const auto shape = symbolic_value(g_, n->inputs[1]);
        if (!shape || shape->elements.size() != 4 || shape->elements[1] != SymbolicDim::number(1) ||
            shape->elements[2] != SymbolicDim::number(1)) {
          return std::nullopt;
        }
      }
      value = n->inputs[0];
    }
    const Node* equal = visit(value, "Equal");
    if (equal == nullptr || equal->inputs.size() != 2 || g_.scalar(equal->inputs[1]) != 0.0)
      return std::nullopt;
    const std::string& m = equal->inputs[0];
    const bool input =
        std::any_of(g_.inputs.begin(), g_.inputs.end(), [&](const ValueInfo& v) { return v.name == m; });
    return input ? std::optional(m) : std::nullopt;
  }

  // A Div by c or Mul by 1/c producing `value`, taken: its input, and the scale folded into `scale`.
  std::string unscaled(const std::string& value, double& scale) {
    const Node* n = g_.producer(value);
    if (n == nullptr || (n->op_type != "Div" && n->op_type != "Mul")) return value;
    const std::optional<double> c = g_.scalar(n->inputs[1]);
    if (!c || *c == 0.0 || take(value, n->op_type) == nullptr) return value;
    scale *= n->op_type == "Div" ? 1.0 / *c : *c;
    return n->inputs[0];
  }

  [[nodiscard]] const std::vector<std::size_t>& nodes() const noexcept { return nodes_; }
  void add(std::size_t i) { nodes_.push_back(i); }

 private:
  const RewriteGraph& g_;
  std::vector<std::size_t> nodes_;
};

// From the final Reshape node `at`.
std::optional<std::pair<std::vector<std::size_t>, Node>> match(const RewriteGraph& g, std::size_t at) {
  const Node& out = g.nodes[at];
  if (out.op_type != "Reshape" || !out.domain.empty() || out.inputs.size() != 2) return std::nullopt;
  Pattern p(g);
  p.add(at);
  const Node* merge = p.take(out.inputs[0], "Transpose");
  if (merge == nullptr || !Pattern::perm_is(*merge, {0, 2, 1, 3})) return std::nullopt;
  const auto out_shape = reshape_target(g, out);
  if (!out_shape || out_shape->elements.size() != 3 || !out_shape->elements[2].constant) return std::nullopt;
  const Node* pv = p.take(merge->inputs[0], "MatMul");
  if (pv == nullptr) return std::nullopt;
  const Node* softmax = p.take(pv->inputs[0], "Softmax");
  if (softmax == nullptr) return std::nullopt;
  if (const Attribute* axis = softmax->attribute("axis"); axis != nullptr && axis->i != -1 && axis->i != 3) {
    return std::nullopt;
  }
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  const auto v = p.split(pv->inputs[1], {0, 2, 1, 3}, heads, head_dim);
  if (!v) return std::nullopt;
  // Softmax's input: [Add(., mask) | Where(key padding, -big, .)] over [Div(., c) | Mul(., 1/c)]
  // over QKᵀ, where q may be scaled before instead (DistilBERT's q / √d).
  std::string scores = softmax->inputs[0];
  std::optional<std::string> mask;
  if (const Node* where = g.producer(scores); where != nullptr && where->op_type == "Where") {
    const std::optional<double> fill = g.scalar(where->inputs[1]);
    if (!fill || *fill > -1e4 || p.take(scores, "Where") == nullptr) return std::nullopt;
    mask = p.key_padding(where->inputs[0]);
    if (!mask) return std::nullopt;
    scores = where->inputs[2];
  } else if (const Node* add = p.take(scores, "Add")) {
    // The scores are the input that comes from QKᵀ (scaled or not); the mask is the other.
    const auto from_qk = [&](const std::string& value) {
      const Node* n = g.producer(value);
      if (n != nullptr && (n->op_type == "Div" || n->op_type == "Mul")) n = g.producer(n->inputs[0]);
      return n != nullptr && (n->op_type == "MatMul" || n->op_type == "FusedMatMul");
    };
    for (int k = 0; k < 2 && !mask; ++k) {
      if (from_qk(add->inputs[k])) {
        scores = add->inputs[k];
        mask = add->inputs[1 - k];
      }
    }
    if (!mask) return std::nullopt;
  }
  double scale = 1.0;
  scores = p.unscaled(scores, scale);
  // QKᵀ: a MatMul of the split keys transposed, or ORT's FusedMatMul with the scale as alpha
  // (and, with transB, the keys split as the queries are).
  std::vector<std::int64_t> key_perm{0, 2, 3, 1};
  const Node* qk = p.take(scores, "MatMul");
  if (qk == nullptr) {
    qk = p.take(scores, "FusedMatMul", kMicrosoftDomain);
    if (qk == nullptr) return std::nullopt;
    const auto flag = [&](const char* name) {
      const Attribute* a = qk->attribute(name);
      return a != nullptr ? a->i : 0;
    };
    if (flag("transA") != 0 || flag("transBatchA") != 0 || flag("transBatchB") != 0) return std::nullopt;
    if (flag("transB") != 0) key_perm = {0, 2, 1, 3};
    if (const Attribute* alpha = qk->attribute("alpha")) scale *= static_cast<double>(alpha->f);
  }
  if (qk->inputs.size() != 2) return std::nullopt;
  const auto q = p.split(p.unscaled(qk->inputs[0], scale), {0, 2, 1, 3}, heads, head_dim);
  const auto k = p.split(qk->inputs[1], key_perm, heads, head_dim);
  if (!q || !k || *out_shape->elements[2].constant != heads * head_dim) return std::nullopt;
  // [batch, sequence | -1, hidden]: batch and sequence read off the merged context, the context
  // before its transpose ([batch, heads, sequence, head_dim]) or the queries' rows.
  const std::string& merged = out.inputs[0];
  const std::string& context = merge->inputs[0];
  const SymbolicDim& batch = out_shape->elements[0];
  const SymbolicDim& sequence = out_shape->elements[1];
  if ((batch != SymbolicDim::dim(merged, 0) && batch != SymbolicDim::dim(context, 0) &&
       !p.leading(batch, *q, 0)) ||
      (sequence != SymbolicDim::dim(merged, 1) && sequence != SymbolicDim::dim(context, 2) &&
       !p.leading(sequence, *q, 1) && sequence != SymbolicDim::number(-1))) {
    return std::nullopt;
  }

  Node attention;
  attention.name = fmt::format("Attention/{}", out.name);
  attention.op_type = "Attention";
  attention.domain = kWardenDomain;
  attention.inputs = {*q, *k, *v};
  if (mask) attention.inputs.push_back(*mask);
  attention.outputs = out.outputs;
  attention.attributes = {int_attribute("num_heads", heads),
                          float_attribute("scale", static_cast<float>(scale))};
  return std::pair{p.nodes(), attention};
}

}  // namespace

std::size_t fuse_attention(RewriteGraph& graph) {
  return rewrite_all(graph, match, true);
}

}  // namespace warden::model::onnx

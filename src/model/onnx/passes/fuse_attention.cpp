#include "model/onnx/passes/fuse_attention.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/onnx/passes/fuse_dense.hpp"
#include "model/onnx/shape_values.hpp"

namespace warden::onnx {

namespace {

class Pattern {
 public:
  explicit Pattern(const RewriteGraph& g) : g_(g) {}

  // The default-domain `op` producing `value`, read by one node besides Shape nodes (the shape
  // computations of the pattern's own Reshapes, which go with it); remembered as part of the
  // match. (The driver checks that the graph is still whole after the rewrite.)
  const Node* take(const std::string& value, std::string_view op) {
    std::size_t readers = 0;
    for (const Node& n : g_.nodes) {
      if (n.op_type == "Shape") continue;
      readers += static_cast<std::size_t>(std::count(n.inputs.begin(), n.inputs.end(), value));
    }
    for (const ValueInfo& v : g_.outputs) readers += v.name == value ? 1 : 0;
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.outputs.size() == 1 && n.outputs[0] == value) {
        if (n.op_type != op || !n.domain.empty() || readers != 1) return nullptr;
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

  // x from split(x) = Transpose(Reshape(x, [x.0, x.1, H, D]), perm), with H and D.
  std::optional<std::string> split(const std::string& value, const std::vector<std::int64_t>& perm,
                                   std::int64_t& heads, std::int64_t& head_dim) {
    const Node* t = take(value, "Transpose");
    if (t == nullptr || !perm_is(*t, perm)) return std::nullopt;
    const Node* r = take(t->inputs[0], "Reshape");
    if (r == nullptr || r->inputs.size() != 2) return std::nullopt;
    const std::string& x = r->inputs[0];
    const auto shape = symbolic_value(g_, r->inputs[1]);
    if (!shape || shape->elements.size() != 4 || shape->elements[0] != SymbolicDim::dim(x, 0) ||
        shape->elements[1] != SymbolicDim::dim(x, 1) || !shape->elements[2].constant ||
        !shape->elements[3].constant) {
      return std::nullopt;
    }
    const std::int64_t h = *shape->elements[2].constant;
    const std::int64_t d = *shape->elements[3].constant;
    if (h <= 0 || d <= 0 || (heads != 0 && (h != heads || d != head_dim))) return std::nullopt;
    heads = h;
    head_dim = d;
    return x;
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
  // [batch, sequence, hidden]: batch and sequence read off the merged context, or off the
  // context before its transpose ([batch, heads, sequence, head_dim]).
  const auto out_shape = symbolic_value(g, out.inputs[1]);
  const std::string& merged = out.inputs[0];
  const std::string& context = merge->inputs[0];
  if (!out_shape || out_shape->elements.size() != 3 || !out_shape->elements[2].constant) return std::nullopt;
  const SymbolicDim& batch = out_shape->elements[0];
  const SymbolicDim& sequence = out_shape->elements[1];
  if ((batch != SymbolicDim::dim(merged, 0) && batch != SymbolicDim::dim(context, 0)) ||
      (sequence != SymbolicDim::dim(merged, 1) && sequence != SymbolicDim::dim(context, 2))) {
    return std::nullopt;
  }
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
  // Softmax's input: [Add(., mask)] over [Div(., c) | Mul(., 1/c)] over QKᵀ.
  std::string scores = softmax->inputs[0];
  std::optional<std::string> mask;
  if (const Node* add = p.take(scores, "Add")) {
    // The scores are the input that comes from QKᵀ (scaled or not); the mask is the other.
    const auto from_qk = [&](const std::string& value) {
      const Node* n = g.producer(value);
      if (n != nullptr && (n->op_type == "Div" || n->op_type == "Mul")) n = g.producer(n->inputs[0]);
      return n != nullptr && n->op_type == "MatMul";
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
  const Node* scaling = g.producer(scores);
  if (scaling != nullptr && (scaling->op_type == "Div" || scaling->op_type == "Mul")) {
    const Node* s = p.take(scores, scaling->op_type);
    if (s == nullptr) return std::nullopt;
    const std::optional<double> c = g.scalar(s->inputs[1]);
    if (!c || *c == 0.0) return std::nullopt;
    scale = s->op_type == "Div" ? 1.0 / *c : *c;
    scores = s->inputs[0];
  }
  const Node* qk = p.take(scores, "MatMul");
  if (qk == nullptr) return std::nullopt;
  const auto q = p.split(qk->inputs[0], {0, 2, 1, 3}, heads, head_dim);
  const auto k = p.split(qk->inputs[1], {0, 2, 3, 1}, heads, head_dim);
  if (!q || !k || *out_shape->elements[2].constant != heads * head_dim) return std::nullopt;

  Node attention;
  attention.name = fmt::format("Attention/{}", out.name);
  attention.op_type = "Attention";
  attention.domain = kWardenDomain;
  attention.inputs = {*q, *k, *v};
  if (mask) attention.inputs.push_back(*mask);
  attention.outputs = out.outputs;
  Attribute h;
  h.name = "num_heads";
  h.type = AttributeType::Int;
  h.i = heads;
  Attribute sc;
  sc.name = "scale";
  sc.type = AttributeType::Float;
  sc.f = static_cast<float>(scale);
  attention.attributes = {h, sc};
  return std::pair{p.nodes(), attention};
}

}  // namespace

std::size_t fuse_attention(RewriteGraph& graph) {
  return rewrite_all(graph, match, true);
}

}  // namespace warden::onnx

#include "model/onnx/passes/fuse_layer_norm.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

class Matcher {
 public:
  explicit Matcher(const RewriteGraph& g) : g_(g) {}

  std::optional<std::size_t> node(const std::string& value, std::string_view op,
                                  std::size_t readers = 1) const {
    return g_.sole(value, op, readers);
  }
  [[nodiscard]] const Node& at(std::size_t i) const { return g_.nodes[i]; }

  // A ReduceMean over the last axis that keeps it (axes as an attribute, or from opset 18 an input).
  [[nodiscard]] bool mean_over_last_axis(const Node& n) const {
    if (const Attribute* k = n.attribute("keepdims"); k != nullptr && k->i != 1) return false;
    std::vector<std::int64_t> axes;
    if (const Attribute* a = n.attribute("axes"); a != nullptr) {
      axes = a->ints;
    } else if (n.inputs.size() > 1) {
      const Tensor* t = g_.constant(n.inputs[1]);
      if (t == nullptr) return false;
      axes = t->to_ints();
    }
    return axes == std::vector<std::int64_t>{-1};
  }

  // The input of binary node `n` that is not `one` (either order), if `one` is one of them.
  static std::optional<std::string> other(const Node& n, const std::string& one) {
    if (n.inputs.size() != 2) return std::nullopt;
    if (n.inputs[0] == one) return n.inputs[1];
    if (n.inputs[1] == one) return n.inputs[0];
    return std::nullopt;
  }

 private:
  const RewriteGraph& g_;
};

// One LayerNorm rooted at the Div node `div`, or nothing.
std::optional<std::pair<std::vector<std::size_t>, Node>> match(const RewriteGraph& g, const Matcher& m,
                                                               std::size_t div) {
  const Node& d = m.at(div);
  if (d.op_type != "Div" || !d.domain.empty() || d.inputs.size() != 2) return std::nullopt;
  const auto sub = m.node(d.inputs[0], "Sub", 2);  // read by the Pow and the Div
  const auto sqrt = m.node(d.inputs[1], "Sqrt");
  if (!sub || !sqrt) return std::nullopt;
  const Node& s = m.at(*sub);
  const auto mean = m.node(s.inputs[1], "ReduceMean");
  if (!mean || m.at(*mean).inputs[0] != s.inputs[0] || !m.mean_over_last_axis(m.at(*mean)))
    return std::nullopt;
  const auto add_eps = m.node(m.at(*sqrt).inputs[0], "Add");
  if (!add_eps) return std::nullopt;
  const Node& ae = m.at(*add_eps);
  std::optional<std::string> eps_value;
  std::optional<std::size_t> var;
  for (int k = 0; k < 2 && !var; ++k) {
    var = m.node(ae.inputs[k], "ReduceMean");
    eps_value = ae.inputs[1 - k];
  }
  const std::optional<double> eps = eps_value ? g.scalar(*eps_value) : std::nullopt;
  if (!var || !eps || !m.mean_over_last_axis(m.at(*var))) return std::nullopt;
  const auto pow = m.node(m.at(*var).inputs[0], "Pow");
  if (!pow || m.at(*pow).inputs[0] != d.inputs[0] || g.scalar(m.at(*pow).inputs[1]) != 2.0)
    return std::nullopt;
  // The affine part: Mul by gamma, then Add beta (the only readers of the Div and the Mul).
  if (g.readers(d.outputs[0]) != 1) return std::nullopt;
  std::optional<std::size_t> mul;
  std::optional<std::size_t> add;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type == "Mul" && n.domain.empty() && Matcher::other(n, d.outputs[0])) mul = i;
  }
  if (!mul) return std::nullopt;
  const std::string gamma = *Matcher::other(m.at(*mul), d.outputs[0]);
  if (g.readers(m.at(*mul).outputs[0]) != 1) return std::nullopt;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type == "Add" && n.domain.empty() && Matcher::other(n, m.at(*mul).outputs[0])) add = i;
  }
  if (!add) return std::nullopt;
  const std::string beta = *Matcher::other(m.at(*add), m.at(*mul).outputs[0]);
  const Tensor* gt = g.constant(gamma);
  const Tensor* bt = g.constant(beta);
  if (gt == nullptr || bt == nullptr || gt->dims.size() != 1 || bt->dims != gt->dims) return std::nullopt;

  Node ln;
  ln.name = fmt::format("LayerNorm/{}", m.at(*add).name);
  ln.op_type = "LayerNormalization";
  ln.inputs = {s.inputs[0], gamma, beta};
  ln.outputs = {m.at(*add).outputs[0]};
  ln.attributes = {int_attribute("axis", -1), float_attribute("epsilon", static_cast<float>(*eps))};
  return std::pair{std::vector<std::size_t>{*mean, *sub, *pow, *var, *add_eps, *sqrt, div, *mul, *add}, ln};
}

}  // namespace

std::size_t fuse_layer_norm(RewriteGraph& graph) {
  return rewrite_all(graph, [](const RewriteGraph& g, std::size_t i) { return match(g, Matcher(g), i); });
}

}  // namespace warden::model::onnx

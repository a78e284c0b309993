#include "model/onnx/passes/fuse_attention_mask.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

std::optional<std::vector<std::int64_t>> axes_of(const RewriteGraph& g, const Node& n) {
  if (const Attribute* a = n.attribute("axes")) return a->ints;
  if (n.inputs.size() > 1) {
    if (const Tensor* t = g.constant(n.inputs[1])) return t->to_ints();
  }
  return std::nullopt;
}

std::optional<std::pair<std::vector<std::size_t>, Node>> match(const RewriteGraph& g, std::size_t at) {
  const Node& mul = g.nodes[at];
  if (mul.op_type != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2) return std::nullopt;
  std::optional<std::size_t> sub;
  for (int k = 0; k < 2 && !sub; ++k) {
    const std::optional<double> big = g.scalar(mul.inputs[1 - k]);
    if (big && *big <= -1e4) sub = g.sole(mul.inputs[k], "Sub");
  }
  if (!sub) return std::nullopt;
  const Node& s = g.nodes[*sub];
  if (g.scalar(s.inputs[0]) != 1.0) return std::nullopt;
  // Down to the graph input through Cast and Unsqueezes adding axes 1 and 2.
  std::vector<std::size_t> nodes{*sub, at};
  std::vector<std::int64_t> added;
  bool cast = false;
  std::string value = s.inputs[1];
  while (g.producer(value) != nullptr) {
    const Node* n = g.producer(value);
    std::optional<std::size_t> i;
    if (n->op_type == "Cast") {
      i = g.sole(value, "Cast");
      const Attribute* to = n->attribute("to");
      if (!i || to == nullptr || to->i != static_cast<std::int64_t>(DataType::Float)) return std::nullopt;
      cast = true;
    } else if (n->op_type == "Unsqueeze") {
      i = g.sole(value, "Unsqueeze");
      const auto axes = i ? axes_of(g, *n) : std::nullopt;
      if (!axes) return std::nullopt;
      added.insert(added.end(), axes->begin(), axes->end());
    } else {
      return std::nullopt;
    }
    nodes.push_back(*i);
    value = n->inputs[0];
  }
  std::sort(added.begin(), added.end());
  const bool input =
      std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == value; });
  if (!cast || !input || added != std::vector<std::int64_t>{1, 2}) return std::nullopt;
  Node mask;
  mask.name = fmt::format("AttentionMask/{}", mul.name);
  mask.op_type = "AttentionMask";
  mask.domain = kWardenDomain;
  mask.inputs = {value};
  mask.outputs = mul.outputs;
  return std::pair{nodes, mask};
}

}  // namespace

std::size_t fuse_attention_mask(RewriteGraph& graph) {
  return rewrite_all(graph, match);
}

}  // namespace warden::model::onnx

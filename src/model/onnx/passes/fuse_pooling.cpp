#include "model/onnx/passes/fuse_pooling.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

// A Reduce* node's axes: the attribute (before opset 13 for ReduceSum, 18 for the others), else
// its second input.
std::optional<std::vector<std::int64_t>> reduce_axes(const RewriteGraph& g, const Node& n) {
  if (const Attribute* a = n.attribute("axes")) return a->ints;
  if (n.inputs.size() > 1) {
    if (const Tensor* t = g.constant(n.inputs[1]); t != nullptr && data_type_size(t->type) != 0)
      return t->to_ints();
  }
  return std::nullopt;
}

bool keepdims(const Node& n) {
  const Attribute* k = n.attribute("keepdims");
  return k == nullptr || k->i != 0;
}

bool is_input(const RewriteGraph& g, const std::string& value) {
  return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == value; });
}

// A Clip's lower bound as a small positive constant (the upper bound absent).
bool small_floor(const RewriteGraph& g, const Node& clip) {
  const std::optional<double> lo = clip.inputs.size() > 1 ? g.scalar(clip.inputs[1]) : std::nullopt;
  const bool no_max = clip.inputs.size() < 3 || clip.inputs[2].empty();
  return lo && *lo > 0.0 && *lo < 1e-3 && no_max;
}

std::optional<Rewrite> mean_pooling(const RewriteGraph& g, std::size_t at) {
  const Node& div = g.nodes[at];
  if (div.op_type != "Div" || !div.domain.empty() || div.inputs.size() != 2) return std::nullopt;
  const auto sum = g.sole(div.inputs[0], "ReduceSum");
  auto count_value = div.inputs[1];
  std::vector<std::size_t> nodes{at};
  if (const auto clip = g.sole(count_value, "Clip")) {
    if (!small_floor(g, g.nodes[*clip])) return std::nullopt;
    nodes.push_back(*clip);
    count_value = g.nodes[*clip].inputs[0];
  }
  const auto count = g.sole(count_value, "ReduceSum");
  if (!sum || !count) return std::nullopt;
  const Node& s = g.nodes[*sum];
  const Node& c = g.nodes[*count];
  const std::vector<std::int64_t> axis1{1};
  if (reduce_axes(g, s) != axis1 || reduce_axes(g, c) != axis1 || keepdims(s) || keepdims(c))
    return std::nullopt;
  const auto mul = g.sole(s.inputs[0], "Mul");
  if (!mul) return std::nullopt;
  const Node& m = g.nodes[*mul];
  // x · mask, either order; the mask is what the count sums.
  const int k = m.inputs[1] == c.inputs[0] ? 0 : m.inputs[0] == c.inputs[0] ? 1 : -1;
  if (k < 0) return std::nullopt;
  const std::string x = m.inputs[static_cast<std::size_t>(k)];
  const auto cast = g.sole(c.inputs[0], "Cast", 2);  // read by the Mul and the count
  if (!cast) return std::nullopt;
  const Attribute* to = g.nodes[*cast].attribute("to");
  const auto expand = g.sole(g.nodes[*cast].inputs[0], "Expand");
  if (to == nullptr || to->i != static_cast<std::int64_t>(DataType::Float) || !expand) return std::nullopt;
  const auto unsqueeze = g.sole(g.nodes[*expand].inputs[0], "Unsqueeze");
  if (!unsqueeze) return std::nullopt;
  const Node& u = g.nodes[*unsqueeze];
  const Attribute* ua = u.attribute("axes");
  const Tensor* ut = u.inputs.size() > 1 ? g.constant(u.inputs[1]) : nullptr;
  const std::vector<std::int64_t> axes = ua != nullptr   ? ua->ints
                                         : ut != nullptr ? ut->to_ints()
                                                         : std::vector<std::int64_t>{};
  if ((axes != std::vector<std::int64_t>{-1} && axes != std::vector<std::int64_t>{2}) ||
      !is_input(g, u.inputs[0])) {
    return std::nullopt;
  }
  nodes.insert(nodes.end(), {*sum, *count, *mul, *cast, *expand, *unsqueeze});
  Node pooling;
  pooling.name = fmt::format("MeanPooling/{}", div.name);
  pooling.op_type = "MeanPooling";
  pooling.domain = kWardenDomain;
  pooling.inputs = {x, u.inputs[0]};
  pooling.outputs = div.outputs;
  return Rewrite{nodes, pooling};
}

std::optional<Rewrite> l2_normalize(const RewriteGraph& g, std::size_t at) {
  const Node& div = g.nodes[at];
  if (div.op_type != "Div" || !div.domain.empty() || div.inputs.size() != 2) return std::nullopt;
  std::vector<std::size_t> nodes{at};
  std::string norm = div.inputs[1];
  if (const auto expand = g.sole(norm, "Expand")) {
    nodes.push_back(*expand);
    norm = g.nodes[*expand].inputs[0];
  }
  const auto clip = g.sole(norm, "Clip");
  if (!clip || !small_floor(g, g.nodes[*clip])) return std::nullopt;
  const auto l2 = g.sole(g.nodes[*clip].inputs[0], "ReduceL2");
  if (!l2) return std::nullopt;
  const Node& r = g.nodes[*l2];
  const auto axes = reduce_axes(g, r);
  if (r.inputs[0] != div.inputs[0] || !keepdims(r) ||
      (axes != std::vector<std::int64_t>{1} && axes != std::vector<std::int64_t>{-1})) {
    return std::nullopt;
  }
  nodes.insert(nodes.end(), {*clip, *l2});
  Node n;
  n.name = fmt::format("L2Normalize/{}", div.name);
  n.op_type = "L2Normalize";
  n.domain = kWardenDomain;
  n.inputs = {div.inputs[0]};
  n.outputs = div.outputs;
  n.attributes = {float_attribute("epsilon", static_cast<float>(*g.scalar(g.nodes[*clip].inputs[1])))};
  return Rewrite{nodes, n};
}

}  // namespace

std::size_t fuse_mean_pooling(RewriteGraph& graph) {
  return rewrite_all(graph, mean_pooling, true);
}

std::size_t fuse_l2_normalize(RewriteGraph& graph) {
  return rewrite_all(graph, l2_normalize, true);
}

}  // namespace warden::model::onnx

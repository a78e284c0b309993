#include "model/onnx/passes/fuse_skip_layer_norm.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

std::optional<Rewrite> match(const RewriteGraph& g, std::size_t at) {
  const Node& ln = g.nodes[at];
  if (!is_last_axis_layer_norm(ln)) return std::nullopt;
  const std::optional<std::size_t> add = g.sole(ln.inputs[0], "Add");
  if (!add || g.nodes[*add].inputs.size() != 2) return std::nullopt;
  const Attribute* eps = ln.attribute("epsilon");
  Node skip;
  skip.name = fmt::format("SkipLayerNorm/{}", ln.name);
  skip.op_type = "SkipLayerNormalization";
  skip.domain = kMicrosoftDomain;
  skip.inputs = {g.nodes[*add].inputs[0], g.nodes[*add].inputs[1], ln.inputs[1], ln.inputs[2]};
  skip.outputs = ln.outputs;
  skip.attributes = {float_attribute("epsilon", eps != nullptr ? eps->f : 1e-5F)};
  return Rewrite{{*add, at}, skip};
}

}  // namespace

std::size_t fuse_skip_layer_norm(RewriteGraph& graph) {
  return rewrite_all(graph, match);
}

}  // namespace warden::model::onnx

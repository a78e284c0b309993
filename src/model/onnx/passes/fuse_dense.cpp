#include "model/onnx/passes/fuse_dense.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::onnx {

namespace {

std::optional<std::pair<std::vector<std::size_t>, Node>> match(const RewriteGraph& g, std::size_t at) {
  const Node& mm = g.nodes[at];
  if (mm.op_type != "MatMul" || !mm.domain.empty() || mm.inputs.size() != 2) return std::nullopt;
  const Tensor* w = g.constant(mm.inputs[1]);
  if (w == nullptr || w->dims.size() != 2 || g.constant(mm.inputs[0]) != nullptr) return std::nullopt;
  const std::int64_t out = w->dims[1];
  Node dense;
  dense.name = fmt::format("Dense/{}", mm.name);
  dense.op_type = "Dense";
  dense.domain = kWardenDomain;
  dense.inputs = {mm.inputs[0], mm.inputs[1]};
  dense.outputs = mm.outputs;
  std::vector<std::size_t> nodes{at};
  // The bias: an Add of a constant [out] vector, the MatMul's only reader.
  if (g.readers(mm.outputs[0]) == 1) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op_type != "Add" || !n.domain.empty() || n.inputs.size() != 2) continue;
      const int k = n.inputs[0] == mm.outputs[0] ? 1 : n.inputs[1] == mm.outputs[0] ? 0 : -1;
      if (k < 0) continue;
      const Tensor* b = g.constant(n.inputs[static_cast<std::size_t>(k)]);
      if (b != nullptr && b->dims == std::vector<std::int64_t>{out}) {
        dense.inputs.push_back(n.inputs[static_cast<std::size_t>(k)]);
        dense.outputs = n.outputs;
        nodes.push_back(i);
      }
      break;
    }
  }
  return std::pair{nodes, dense};
}

}  // namespace

std::size_t fuse_dense(RewriteGraph& graph) {
  return rewrite_all(graph, match);
}

}  // namespace warden::onnx

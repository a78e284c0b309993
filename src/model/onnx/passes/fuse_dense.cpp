#include "model/onnx/passes/fuse_dense.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

std::optional<std::pair<std::vector<std::size_t>, Node>> match(const RewriteGraph& g, std::size_t at) {
  const Node& mm = g.nodes[at];
  // A MatMul by a constant, or a dense layer made without its bias (the quantised ones, whose
  // bias Add follows the rescaling).
  const bool matmul = mm.op_type == "MatMul" && mm.domain.empty() && mm.inputs.size() == 2;
  const bool unbiased = mm.op_type == "Dense" && mm.domain == kWardenDomain && mm.inputs.size() >= 2 &&
                        (mm.inputs.size() < 3 || mm.inputs[2].empty());
  if (!matmul && !unbiased) return std::nullopt;
  const Tensor* w = g.constant(mm.inputs[1]);
  if (w == nullptr || w->dims.size() != 2 || g.constant(mm.inputs[0]) != nullptr) return std::nullopt;
  const std::int64_t out = w->dims[1];
  Node dense = mm;
  if (matmul) {
    dense.name = fmt::format("Dense/{}", mm.name);
    dense.op_type = "Dense";
    dense.domain = kWardenDomain;
  }
  const auto set_bias = [&](const std::string& b) {
    if (dense.inputs.size() < 3) dense.inputs.resize(3);
    dense.inputs[2] = b;
  };
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
        set_bias(n.inputs[static_cast<std::size_t>(k)]);
        dense.outputs = n.outputs;
        nodes.push_back(i);
      }
      break;
    }
  }
  if (unbiased && nodes.size() == 1) return std::nullopt;  // nothing to take
  return std::pair{nodes, dense};
}

}  // namespace

std::size_t fuse_dense(RewriteGraph& graph) {
  return rewrite_all(graph, match);
}

}  // namespace warden::model::onnx

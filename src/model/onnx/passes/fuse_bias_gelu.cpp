#include "model/onnx/passes/fuse_bias_gelu.hpp"

#include <algorithm>

namespace warden::model::onnx {

std::size_t fuse_bias_gelu(RewriteGraph& graph) {
  std::size_t made = 0;
  for (Node& gelu : graph.nodes) {
    if (gelu.op_type != "BiasGelu" || gelu.domain != kMicrosoftDomain || gelu.inputs.size() != 2) continue;
    const Tensor* bias = graph.constant(gelu.inputs[1]);
    if (bias == nullptr || bias->dims.size() != 1 || graph.readers(gelu.inputs[0]) != 1) continue;
    const auto dense = std::find_if(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) {
      return n.outputs.size() == 1 && n.outputs[0] == gelu.inputs[0];
    });
    if (dense == graph.nodes.end() || dense->op_type != "Dense" || dense->domain != kWardenDomain ||
        dense->inputs.size() < 2 || (dense->inputs.size() > 2 && !dense->inputs[2].empty())) {
      continue;
    }
    const Tensor* weight = graph.constant(dense->inputs[1]);
    if (weight == nullptr || weight->dims.size() != 2 || weight->dims[1] != bias->dims[0]) continue;
    if (dense->inputs.size() < 3) dense->inputs.resize(3);
    dense->inputs[2] = gelu.inputs[1];
    gelu.op_type = "Gelu";
    gelu.inputs.pop_back();
    ++made;
  }
  return made;
}

}  // namespace warden::model::onnx

#include "model/onnx/passes/fuse_gemm.hpp"

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

std::optional<Rewrite> match(const RewriteGraph& g, std::size_t at) {
  const Node& gemm = g.nodes[at];
  if (gemm.op_type != "Gemm" || !gemm.domain.empty() || gemm.inputs.size() < 2 || gemm.outputs.size() != 1) {
    return std::nullopt;
  }
  const auto attr = [&](const char* name, double fallback) {
    const Attribute* a = gemm.attribute(name);
    if (a == nullptr) return fallback;
    return a->type == AttributeType::Float ? static_cast<double>(a->f) : static_cast<double>(a->i);
  };
  const bool trans_b = attr("transB", 0) != 0;
  const Tensor* w = g.constant(gemm.inputs[1]);
  const bool has_bias = gemm.inputs.size() > 2 && !gemm.inputs[2].empty();
  const Tensor* b = has_bias ? g.constant(gemm.inputs[2]) : nullptr;
  if (attr("alpha", 1) != 1.0 || (has_bias && attr("beta", 1) != 1.0) || attr("transA", 0) != 0 ||
      w == nullptr || w->dims.size() != 2 || (has_bias && b == nullptr)) {
    return std::nullopt;
  }
  const std::int64_t out = trans_b ? w->dims[0] : w->dims[1];
  if (b != nullptr && b->dims != std::vector<std::int64_t>{out}) return std::nullopt;
  Node dense;
  dense.name = fmt::format("Dense/{}", gemm.name);
  dense.op_type = "Dense";
  dense.domain = kWardenDomain;
  dense.inputs = {gemm.inputs[0], gemm.inputs[1], has_bias ? gemm.inputs[2] : std::string()};
  dense.outputs = gemm.outputs;
  if (trans_b) dense.attributes = {int_attribute("out_in", 1)};
  return Rewrite{{at}, dense};
}

}  // namespace

std::size_t fuse_gemm(RewriteGraph& graph) {
  return rewrite_all(graph, match);
}

}  // namespace warden::model::onnx

#include "model/onnx/passes/fuse_quantized_dense.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::onnx {

namespace {

// W_q int8 [in x out], its scale a scalar or [out], its zero point absent or all zero.
bool symmetric_int8(const RewriteGraph& g, const std::string& w, const std::string& scale,
                    const std::string& zero) {
  const Tensor* wt = g.constant(w);
  const Tensor* st = g.constant(scale);
  const Tensor* zt = zero.empty() ? nullptr : g.constant(zero);
  if (wt == nullptr || wt->type != DataType::Int8 || wt->dims.size() != 2 || st == nullptr ||
      st->type != DataType::Float || (!zero.empty() && zt == nullptr)) {
    return false;
  }
  const auto per_column = [&](const Tensor& t) {
    return t.element_count() == 1 || (t.dims.size() == 1 && t.dims[0] == wt->dims[1]);
  };
  if (!per_column(*st) || (zt != nullptr && !per_column(*zt))) return false;
  if (zt == nullptr) return true;
  const std::vector<std::int64_t> zeros = zt->to_ints();
  return std::all_of(zeros.begin(), zeros.end(), [](std::int64_t z) { return z == 0; });
}

Node dense(const std::string& name, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  Node d;
  d.name = fmt::format("Dense/{}", name);
  d.op_type = "Dense";
  d.domain = kWardenDomain;
  d.inputs = std::move(inputs);
  d.outputs = std::move(outputs);
  return d;
}

std::optional<Rewrite> match(const RewriteGraph& g, std::size_t at) {
  const Node& n = g.nodes[at];
  if (n.op_type == "DynamicQuantizeMatMul" && n.domain == kMicrosoftDomain && n.inputs.size() >= 3 &&
      n.outputs.size() == 1) {
    const std::string zero = n.inputs.size() > 3 ? n.inputs[3] : std::string();
    const std::string bias = n.inputs.size() > 4 ? n.inputs[4] : std::string();
    if (!symmetric_int8(g, n.inputs[1], n.inputs[2], zero) ||
        (!bias.empty() && g.constant(bias) == nullptr)) {
      return std::nullopt;
    }
    return Rewrite{{at}, dense(n.name, {n.inputs[0], n.inputs[1], bias, n.inputs[2]}, n.outputs)};
  }
  if (n.op_type == "MatMulIntegerToFloat" && n.domain == kMicrosoftDomain && n.inputs.size() >= 4 &&
      n.outputs.size() == 1) {
    // (x_q, W_q, x_scale, W_scale[, x_zp[, W_zp[, bias]]]), x quantised by a DynamicQuantizeLinear.
    const Node* dql = g.producer(n.inputs[0]);
    const auto input = [&](std::size_t i) { return i < n.inputs.size() ? n.inputs[i] : std::string(); };
    if (dql == nullptr || dql->op_type != "DynamicQuantizeLinear" || !dql->domain.empty() ||
        dql->outputs.size() != 3 || n.inputs[2] != dql->outputs[1] ||
        (!input(4).empty() && input(4) != dql->outputs[2]) ||
        !symmetric_int8(g, n.inputs[1], n.inputs[3], input(5)) ||
        (!input(6).empty() && g.constant(input(6)) == nullptr)) {
      return std::nullopt;
    }
    return Rewrite{{at}, dense(n.name, {dql->inputs[0], n.inputs[1], input(6), n.inputs[3]}, n.outputs)};
  }
  if (n.op_type != "Mul" || !n.domain.empty() || n.inputs.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const std::optional<std::size_t> cast = g.sole(n.inputs[k], "Cast");
    const std::optional<std::size_t> scales = g.sole(n.inputs[1 - k], "Mul");
    if (!cast || !scales) continue;
    const Attribute* to = g.nodes[*cast].attribute("to");
    const std::optional<std::size_t> mmi = g.sole(g.nodes[*cast].inputs[0], "MatMulInteger");
    if (to == nullptr || to->i != static_cast<std::int64_t>(DataType::Float) || !mmi) continue;
    const Node& m = g.nodes[*mmi];
    const Node* dql = m.inputs.empty() ? nullptr : g.producer(m.inputs[0]);
    if (dql == nullptr || dql->op_type != "DynamicQuantizeLinear" || !dql->domain.empty() ||
        dql->outputs.size() != 3 || m.inputs.size() != 4 || m.inputs[2] != dql->outputs[2]) {
      continue;
    }
    // Mul(x_scale, W_scale), either order.
    const Node& s = g.nodes[*scales];
    const int w = s.inputs[0] == dql->outputs[1] ? 1 : s.inputs[1] == dql->outputs[1] ? 0 : -1;
    if (w < 0) continue;
    const std::string& w_scale = s.inputs[static_cast<std::size_t>(w)];
    if (!symmetric_int8(g, m.inputs[1], w_scale, m.inputs[3])) continue;
    return Rewrite{{*mmi, *cast, *scales, at},
                   dense(m.name, {dql->inputs[0], m.inputs[1], "", w_scale}, n.outputs)};
  }
  return std::nullopt;
}

}  // namespace

std::size_t fuse_quantized_dense(RewriteGraph& graph) {
  return rewrite_all(graph, match, true);
}

}  // namespace warden::onnx

#include "model/onnx/passes/fuse_quantized_dense.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

std::string dequantized_name(const std::string& w) {
  return w + "/dequantized";
}

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

// The operands a Dense takes for the quantised weight (W_q, its scale, its zero point): the file's
// int8 values and scale when they are symmetric, else the float weight add_dequantized_weights
// made of them (with no scale); nullopt when neither.
std::optional<std::pair<std::string, std::string>> weight_operands(const RewriteGraph& g,
                                                                   const std::string& w,
                                                                   const std::string& scale,
                                                                   const std::string& zero) {
  if (symmetric_int8(g, w, scale, zero)) return std::pair{w, scale};
  if (g.constant(dequantized_name(w)) != nullptr) return std::pair{dequantized_name(w), std::string()};
  return std::nullopt;
}

Node dense(const std::string& name, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  Node d;
  d.name = fmt::format("Dense/{}", name);
  d.op_type = "Dense";
  d.domain = kWardenDomain;
  d.inputs = std::move(inputs);
  while (d.inputs.back().empty()) d.inputs.pop_back();  // Dense(x, W[, b[, W_scale]])
  d.outputs = std::move(outputs);
  return d;
}

std::optional<Rewrite> match(const RewriteGraph& g, std::size_t at) {
  const Node& n = g.nodes[at];
  if (n.op_type == "DynamicQuantizeMatMul" && n.domain == kMicrosoftDomain && n.inputs.size() >= 3 &&
      n.outputs.size() == 1) {
    const std::string zero = n.inputs.size() > 3 ? n.inputs[3] : std::string();
    const std::string bias = n.inputs.size() > 4 ? n.inputs[4] : std::string();
    const auto w = weight_operands(g, n.inputs[1], n.inputs[2], zero);
    if (!w || (!bias.empty() && g.constant(bias) == nullptr)) return std::nullopt;
    return Rewrite{{at}, dense(n.name, {n.inputs[0], w->first, bias, w->second}, n.outputs)};
  }
  if (n.op_type == "MatMulIntegerToFloat" && n.domain == kMicrosoftDomain && n.inputs.size() >= 4 &&
      n.outputs.size() == 1) {
    // (x_q, W_q, x_scale, W_scale[, x_zp[, W_zp[, bias]]]), x quantised by a DynamicQuantizeLinear.
    const Node* dql = g.producer(n.inputs[0]);
    const auto input = [&](std::size_t i) { return i < n.inputs.size() ? n.inputs[i] : std::string(); };
    if (dql == nullptr || dql->op_type != "DynamicQuantizeLinear" || !dql->domain.empty() ||
        dql->outputs.size() != 3 || n.inputs[2] != dql->outputs[1] ||
        (!input(4).empty() && input(4) != dql->outputs[2]) ||
        (!input(6).empty() && g.constant(input(6)) == nullptr)) {
      return std::nullopt;
    }
    const auto w = weight_operands(g, n.inputs[1], n.inputs[3], input(5));
    if (!w) return std::nullopt;
    return Rewrite{{at}, dense(n.name, {dql->inputs[0], w->first, input(6), w->second}, n.outputs)};
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
    const auto weight = weight_operands(g, m.inputs[1], w_scale, m.inputs[3]);
    if (!weight) continue;
    return Rewrite{{*mmi, *cast, *scales, at},
                   dense(m.name, {dql->inputs[0], weight->first, "", weight->second}, n.outputs)};
  }
  return std::nullopt;
}

// The weight scale of a MatMulInteger's output `out`: Mul(Cast(out), Mul(x_scale, W_scale)), the
// constant operand of the inner Mul; "" when the graph is not that.
std::string matmul_integer_scale(const RewriteGraph& g, const std::string& out) {
  for (const Node& cast : g.nodes) {
    if (cast.op_type != "Cast" || cast.inputs.size() != 1 || cast.inputs[0] != out) continue;
    for (const Node& mul : g.nodes) {
      if (mul.op_type != "Mul" || mul.inputs.size() != 2) continue;
      const int k = mul.inputs[0] == cast.outputs[0] ? 1 : mul.inputs[1] == cast.outputs[0] ? 0 : -1;
      const Node* scales = k < 0 ? nullptr : g.producer(mul.inputs[static_cast<std::size_t>(k)]);
      if (scales == nullptr || scales->op_type != "Mul" || scales->inputs.size() != 2) continue;
      for (const std::string& in : scales->inputs) {
        if (g.constant(in) != nullptr) return in;
      }
    }
  }
  return {};
}

// Asymmetric weights (uint8, or int8 with a zero point: quantize_dynamic's QUInt8, as
// transformers.js's model_uint8.onnx has them) do not fit Warden's symmetric int8 layers
// exactly: each such W_q gets its float weight (W_q - W_zp) · W_scale beside it, which the Dense
// then takes (and `--dtype int8` requantises as it does a float checkpoint).
void add_dequantized_weights(RewriteGraph& g) {
  for (const Node& n : g.nodes) {
    const auto input = [&](std::size_t i) { return i < n.inputs.size() ? n.inputs[i] : std::string(); };
    const std::string w = input(1);  // each form's weight is its second input
    std::string scale;
    std::string zero;
    if (n.op_type == "DynamicQuantizeMatMul" && n.domain == kMicrosoftDomain) {
      scale = input(2);
      zero = input(3);
    } else if (n.op_type == "MatMulIntegerToFloat" && n.domain == kMicrosoftDomain) {
      scale = input(3);
      zero = input(5);
    } else if (n.op_type == "MatMulInteger" && n.domain.empty() && n.outputs.size() == 1) {
      scale = matmul_integer_scale(g, n.outputs[0]);
      zero = input(3);
    } else {
      continue;
    }
    const Tensor* q = g.constant(w);
    const Tensor* s = g.constant(scale);
    const Tensor* z = zero.empty() ? nullptr : g.constant(zero);
    if (q == nullptr || s == nullptr || q->dims.size() != 2 || symmetric_int8(g, w, scale, zero) ||
        g.constant(dequantized_name(w)) != nullptr ||
        (q->type != DataType::Int8 && q->type != DataType::Uint8) || (z != nullptr && z->type != q->type) ||
        (!zero.empty() && z == nullptr) || s->type != DataType::Float) {
      continue;
    }
    const auto columns = static_cast<std::size_t>(q->dims[1]);
    const std::vector<float> scales = s->to_floats();
    const std::vector<std::int64_t> zeros = z != nullptr ? z->to_ints() : std::vector<std::int64_t>{};
    const auto fits = [&](std::size_t count) { return count == 1 || count == columns; };
    if (!fits(scales.size()) || (z != nullptr && !fits(zeros.size()))) continue;
    const std::vector<std::int64_t> values = q->to_ints();
    std::vector<float> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::size_t c = i % columns;
      const std::int64_t zp = zeros.empty() ? 0 : zeros[zeros.size() == 1 ? 0 : c];
      out[i] = static_cast<float>(values[i] - zp) * scales[scales.size() == 1 ? 0 : c];
    }
    const std::string name = dequantized_name(w);
    g.constants.insert_or_assign(name, float_constant(name, q->dims, out));
  }
}

}  // namespace

std::size_t fuse_quantized_dense(RewriteGraph& graph) {
  add_dequantized_weights(graph);
  return rewrite_all(graph, match, true);
}

}  // namespace warden::model::onnx

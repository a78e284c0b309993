#include "model/onnx/passes/fold_dequantize.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace warden::model::onnx {

namespace {

bool quantized_type(DataType t) {
  return t == DataType::Int8 || t == DataType::Uint8 || t == DataType::Int32;
}

// (q - zero_point) · scale for the constant q, with scale and zero point per tensor, or per
// slice along `axis`; nullopt for shapes that do not fit.
std::optional<std::vector<float>> dequantize(const Tensor& q, const Tensor& scale, const Tensor* zero_point,
                                             std::int64_t axis) {
  if (!quantized_type(q.type) || (zero_point != nullptr && zero_point->type != q.type)) return std::nullopt;
  const std::vector<std::int64_t> values = q.to_ints();
  const std::vector<float> scales = scale.to_floats();
  const std::vector<std::int64_t> zeros =
      zero_point != nullptr ? zero_point->to_ints() : std::vector<std::int64_t>{};
  if (scales.empty() || (!zeros.empty() && zeros.size() != scales.size())) return std::nullopt;
  std::size_t inner = 1;  // elements per step along the axis
  std::size_t along = 1;
  if (scales.size() > 1) {
    const auto rank = static_cast<std::int64_t>(q.dims.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank ||
        q.dims[static_cast<std::size_t>(axis)] != static_cast<std::int64_t>(scales.size())) {
      return std::nullopt;
    }
    along = scales.size();
    for (auto d = static_cast<std::size_t>(axis) + 1; d < q.dims.size(); ++d)
      inner *= static_cast<std::size_t>(q.dims[d]);
  }
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t c = along > 1 ? (i / inner) % along : 0;
    const std::int64_t z = zeros.empty() ? 0 : zeros[c];
    out[i] = static_cast<float>(values[i] - z) * scales[c];
  }
  return out;
}

// ORT's optimiser may give one gathered value several identical DequantizeLinear readers (one per
// consumer): the later ones are dropped and their readers read the first's output. Whether every
// reader of `value` is now the one DequantizeLinear at `first`.
bool merge_duplicate_dequantizes(RewriteGraph& graph, const std::string& value, std::size_t first) {
  const Node& keep = graph.nodes[first];
  for (std::size_t i = graph.nodes.size(); i-- > first + 1;) {
    const Node& n = graph.nodes[i];
    if (n.op_type != "DequantizeLinear" || !n.domain.empty() || n.inputs != keep.inputs ||
        n.outputs.size() != 1 || n.attributes.size() != keep.attributes.size()) {
      continue;
    }
    const std::string gone = n.outputs[0];
    if (std::any_of(graph.outputs.begin(), graph.outputs.end(),
                    [&](const ValueInfo& v) { return v.name == gone; })) {
      continue;
    }
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    for (Node& reader : graph.nodes)
      std::replace(reader.inputs.begin(), reader.inputs.end(), gone, keep.outputs[0]);
  }
  return graph.readers(value) == 1;
}

}  // namespace

std::size_t fold_dequantize(RewriteGraph& graph) {
  std::size_t folded = 0;
  for (std::size_t i = 0; i < graph.nodes.size();) {
    const Node& dq = graph.nodes[i];
    const Tensor* scale = dq.inputs.size() > 1 ? graph.constant(dq.inputs[1]) : nullptr;
    const Tensor* zero =
        dq.inputs.size() > 2 && !dq.inputs[2].empty() ? graph.constant(dq.inputs[2]) : nullptr;
    if (dq.op_type != "DequantizeLinear" || !dq.domain.empty() || scale == nullptr ||
        dq.outputs.size() != 1 || (dq.inputs.size() > 2 && !dq.inputs[2].empty() && zero == nullptr)) {
      ++i;
      continue;
    }
    const Attribute* axis = dq.attribute("axis");
    const std::int64_t a = axis != nullptr ? axis->i : 1;
    if (const Tensor* q = graph.constant(dq.inputs[0])) {
      const auto values = dequantize(*q, *scale, zero, a);
      if (!values) {
        ++i;
        continue;
      }
      const std::string name = dq.outputs[0];
      graph.constants.insert_or_assign(name, float_constant(name, q->dims, *values));
      graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      ++folded;
      continue;
    }
    // Gather(q table, ids) read only here, per-tensor scale: gather from the dequantised table.
    const auto gather = std::find_if(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) {
      return n.outputs.size() == 1 && n.outputs[0] == dq.inputs[0];
    });
    const bool gathered = gather != graph.nodes.end() && gather->op_type == "Gather" &&
                          gather->domain.empty() && gather->inputs.size() == 2;
    const Tensor* table = gathered && merge_duplicate_dequantizes(graph, dq.inputs[0], i)
                              ? graph.constant(gather->inputs[0])
                              : nullptr;
    const auto values =
        table != nullptr && scale->element_count() == 1 ? dequantize(*table, *scale, zero, 0) : std::nullopt;
    if (!values) {
      ++i;
      continue;
    }
    const std::string name = gather->inputs[0] + "/dequantized";
    graph.constants.insert_or_assign(name, float_constant(name, table->dims, *values));
    gather->inputs[0] = name;
    gather->outputs[0] = dq.outputs[0];
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    ++folded;
  }
  return folded;
}

}  // namespace warden::model::onnx

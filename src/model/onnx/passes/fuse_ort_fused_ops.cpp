#include "model/onnx/passes/fuse_ort_fused_ops.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

bool is_input(const RewriteGraph& g, const std::string& value) {
  return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == value; });
}

// The graph input `value` is, directly or through a Cast (to int32 or int64); nullopt else.
std::optional<std::string> graph_input(const RewriteGraph& g, const std::string& value) {
  if (is_input(g, value)) return value;
  const Node* cast = g.producer(value);
  const Attribute* to = cast != nullptr ? cast->attribute("to") : nullptr;
  if (cast == nullptr || cast->op_type != "Cast" || !cast->domain.empty() || to == nullptr ||
      (to->i != static_cast<std::int64_t>(DataType::Int32) &&
       to->i != static_cast<std::int64_t>(DataType::Int64)) ||
      !is_input(g, cast->inputs[0])) {
    return std::nullopt;
  }
  return cast->inputs[0];
}

std::string input(const Node& n, std::size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : std::string();
}

}  // namespace

std::size_t fuse_ort_embed_layer_norm(RewriteGraph& graph) {
  std::size_t made = 0;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    if (n.op_type != "EmbedLayerNormalization" || n.domain != kMicrosoftDomain || n.inputs.size() < 7)
      continue;
    const auto ids = graph_input(graph, n.inputs[0]);
    const std::string segment = input(n, 1);
    const auto segment_ids = segment.empty() ? std::optional<std::string>("") : graph_input(graph, segment);
    const std::string mask = input(n, 7);
    const auto mask_input = mask.empty() ? std::optional<std::string>("") : graph_input(graph, mask);
    const bool tables = graph.constant(n.inputs[2]) != nullptr && graph.constant(n.inputs[3]) != nullptr &&
                        (input(n, 4).empty() || graph.constant(n.inputs[4]) != nullptr) &&
                        graph.constant(n.inputs[5]) != nullptr && graph.constant(n.inputs[6]) != nullptr;
    const bool mask_index_used =
        n.outputs.size() > 1 && !n.outputs[1].empty() && graph.readers(n.outputs[1]) > 0;
    if (!ids || !segment_ids || !mask_input || !tables || !input(n, 8).empty() ||
        (mask_index_used && mask_input->empty()) || (n.outputs.size() > 2 && !n.outputs[2].empty())) {
      continue;
    }
    const Attribute* eps = n.attribute("epsilon");
    Node e;
    e.name = fmt::format("Embeddings/{}", n.name);
    e.op_type = "Embeddings";
    e.domain = kWardenDomain;
    // ORT adds the segment table only with segment ids.
    e.inputs = {*ids,        *segment_ids, n.inputs[2], n.inputs[3], segment_ids->empty() ? "" : input(n, 4),
                n.inputs[5], n.inputs[6]};
    e.outputs = {n.outputs[0]};
    e.attributes = {float_attribute("epsilon", eps != nullptr ? eps->f : 1e-12F),
                    int_attribute("padding_idx", -1), int_attribute("zero_types", 0)};
    std::optional<Node> mask_node;
    if (mask_index_used) {
      Node m;
      m.name = fmt::format("AttentionMask/{}", n.name);
      m.op_type = "AttentionMask";
      m.domain = kWardenDomain;
      m.inputs = {*mask_input};
      m.outputs = {n.outputs[1]};
      mask_node = std::move(m);
    }
    n = std::move(e);
    if (mask_node)
      graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(*mask_node));
    ++made;
  }
  return made;
}

std::size_t fuse_ort_attention(RewriteGraph& graph) {
  std::size_t made = 0;
  for (Node& n : graph.nodes) {
    if (n.op_type != "Attention" || n.domain != kMicrosoftDomain || n.inputs.size() < 3 ||
        n.outputs.size() != 1) {
      continue;
    }
    const Tensor* w = graph.constant(n.inputs[1]);
    const Tensor* b = graph.constant(n.inputs[2]);
    const Attribute* heads = n.attribute("num_heads");
    const Attribute* unidirectional = n.attribute("unidirectional");
    const Attribute* sizes = n.attribute("qkv_hidden_sizes");
    const bool extra = std::any_of(
        n.inputs.begin() + std::min<std::ptrdiff_t>(4, static_cast<std::ptrdiff_t>(n.inputs.size())),
        n.inputs.end(), [](const std::string& s) { return !s.empty(); });
    if (w == nullptr || b == nullptr || w->dims.size() != 2 || w->dims[1] % 3 != 0 ||
        b->dims != std::vector{w->dims[1]} || heads == nullptr || heads->i <= 0 ||
        (w->dims[1] / 3) % heads->i != 0 || extra || (unidirectional != nullptr && unidirectional->i != 0) ||
        (sizes != nullptr && !(sizes->ints.size() == 3 && sizes->ints[0] == w->dims[1] / 3 &&
                               sizes->ints[1] == sizes->ints[0] && sizes->ints[2] == sizes->ints[0]))) {
      continue;
    }
    const double head_dim = static_cast<double>(w->dims[1] / 3 / heads->i);
    const Attribute* scale = n.attribute("scale");
    const float s =
        scale != nullptr && scale->f != 0.0F ? scale->f : static_cast<float>(1.0 / std::sqrt(head_dim));
    Node a;
    a.name = fmt::format("Attention/{}", n.name);
    a.op_type = "Attention";
    a.domain = kWardenDomain;
    a.inputs = {n.inputs[0], n.inputs[1], n.inputs[2]};
    if (!input(n, 3).empty()) a.inputs.push_back(n.inputs[3]);
    a.outputs = n.outputs;
    a.attributes = {int_attribute("num_heads", heads->i), float_attribute("scale", s),
                    int_attribute("packed_qkv", 1)};
    n = std::move(a);
    ++made;
  }
  return made;
}

}  // namespace warden::model::onnx

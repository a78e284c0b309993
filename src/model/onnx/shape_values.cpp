#include "model/onnx/shape_values.hpp"

namespace warden::model::onnx {

namespace {

constexpr int kMaxDepth = 32;

// Shape(x) before an element is picked: its rank is not known, so it stays lazy.
struct Lazy {
  std::optional<SymbolicValue> value;
  std::string shape_of;  // set when the value is Shape(shape_of)
  std::int64_t start = 0;
};

Lazy evaluate(const RewriteGraph& g, std::string_view name, int depth);

std::optional<SymbolicValue> known(const RewriteGraph& g, std::string_view name, int depth) {
  Lazy l = evaluate(g, name, depth);
  return l.value;
}

// An integer constant of rank 0 or 1.
std::optional<std::vector<std::int64_t>> ints(const RewriteGraph& g, std::string_view name,
                                              bool* scalar = nullptr) {
  const Tensor* t = g.constant(name);
  if (t == nullptr || t->dims.size() > 1) return std::nullopt;
  switch (t->type) {
    case DataType::Int64:
    case DataType::Int32:
      break;
    default:
      return std::nullopt;
  }
  if (scalar != nullptr) *scalar = t->dims.empty();
  return t->to_ints();
}

// A node's axes: the attribute (before opset 13), else its second input.
std::optional<std::vector<std::int64_t>> axes_of(const RewriteGraph& g, const Node& n) {
  if (const Attribute* a = n.attribute("axes")) return a->ints;
  if (n.inputs.size() > 1) return ints(g, n.inputs[1]);
  return std::nullopt;
}

Lazy evaluate(const RewriteGraph& g, std::string_view name, int depth) {
  if (depth > kMaxDepth) return {};
  bool scalar = false;
  if (auto c = ints(g, name, &scalar)) {
    SymbolicValue v;
    v.scalar = scalar;
    for (const std::int64_t x : *c) v.elements.push_back(SymbolicDim::number(x));
    return {v, {}, 0};
  }
  const Node* n = g.producer(name);
  if (n == nullptr || !n->domain.empty() || n->inputs.empty()) return {};
  const std::string& op = n->op_type;
  if (op == "Shape") {
    const Attribute* start = n->attribute("start");
    if (n->attribute("end") != nullptr || (start != nullptr && start->i < 0)) return {};
    return {std::nullopt, n->inputs[0], start != nullptr ? start->i : 0};
  }
  if (op == "Cast") {
    const Attribute* to = n->attribute("to");
    if (to == nullptr || (to->i != static_cast<std::int64_t>(DataType::Int64) &&
                          to->i != static_cast<std::int64_t>(DataType::Int32))) {
      return {};
    }
    return evaluate(g, n->inputs[0], depth + 1);
  }
  if (op == "Gather") {
    const Attribute* axis = n->attribute("axis");
    if ((axis != nullptr && axis->i != 0) || n->inputs.size() != 2) return {};
    bool index_scalar = false;
    const auto index = ints(g, n->inputs[1], &index_scalar);
    if (!index) return {};
    const Lazy data = evaluate(g, n->inputs[0], depth + 1);
    SymbolicValue out;
    out.scalar = index_scalar;
    for (const std::int64_t i : *index) {
      if (!data.shape_of.empty()) {
        if (i < 0) return {};  // from the end: the rank is needed
        out.elements.push_back(SymbolicDim::dim(data.shape_of, data.start + i));
      } else if (data.value && i >= 0 && static_cast<std::size_t>(i) < data.value->elements.size()) {
        out.elements.push_back(data.value->elements[static_cast<std::size_t>(i)]);
      } else {
        return {};
      }
    }
    return {out, {}, 0};
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const auto v = known(g, n->inputs[0], depth + 1);
    const auto axes = axes_of(g, *n);
    if (!v || !axes || *axes != std::vector<std::int64_t>{0}) return {};
    if (op == "Unsqueeze" && v->scalar) return {SymbolicValue{v->elements, false}, {}, 0};
    if (op == "Squeeze" && !v->scalar && v->elements.size() == 1)
      return {SymbolicValue{v->elements, true}, {}, 0};
    return {};
  }
  if (op == "Concat") {
    const Attribute* axis = n->attribute("axis");
    if (axis == nullptr || axis->i != 0) return {};
    SymbolicValue out;
    for (const std::string& in : n->inputs) {
      const auto v = known(g, in, depth + 1);
      if (!v || v->scalar) return {};
      out.elements.insert(out.elements.end(), v->elements.begin(), v->elements.end());
    }
    return {out, {}, 0};
  }
  return {};
}

}  // namespace

std::optional<SymbolicValue> symbolic_value(const RewriteGraph& graph, std::string_view value) {
  return known(graph, value, 0);
}

std::optional<SymbolicValue> reshape_target(const RewriteGraph& graph, const Node& reshape) {
  if (reshape.inputs.size() != 2) return std::nullopt;
  std::optional<SymbolicValue> shape = symbolic_value(graph, reshape.inputs[1]);
  const Attribute* allowzero = reshape.attribute("allowzero");
  if (!shape || (allowzero != nullptr && allowzero->i != 0)) return shape;
  for (std::size_t i = 0; i < shape->elements.size(); ++i) {
    if (shape->elements[i] == SymbolicDim::number(0)) {
      shape->elements[i] = SymbolicDim::dim(reshape.inputs[0], static_cast<std::int64_t>(i));
    }
  }
  return shape;
}

}  // namespace warden::model::onnx

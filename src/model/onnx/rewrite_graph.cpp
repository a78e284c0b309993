#include "model/onnx/rewrite_graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/onnx/graph_order.hpp"

namespace warden::model::onnx {

namespace {

// A constant tensor made here (from a Constant node's scalar or list attribute).
template <typename T>
Tensor owned_tensor(const std::string& name, DataType type, const std::vector<T>& values, bool scalar) {
  auto bytes = std::make_shared<std::vector<std::byte>>(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
  Tensor t;
  t.name = name;
  t.type = type;
  if (!scalar) t.dims = {static_cast<std::int64_t>(values.size())};
  t.data = std::span<const std::byte>(bytes->data(), bytes->size());
  t.owner = bytes;
  return t;
}

Tensor constant_value(const Node& n, std::string_view source) {
  const std::string& name = n.outputs.front();
  for (const Attribute& a : n.attributes) {
    if (a.name == "value" && a.t) {
      Tensor t = *a.t;
      t.name = name;
      return t;
    }
    if (a.name == "value_float") return owned_tensor(name, DataType::Float, std::vector<float>{a.f}, true);
    if (a.name == "value_floats") return owned_tensor(name, DataType::Float, a.floats, false);
    if (a.name == "value_int")
      return owned_tensor(name, DataType::Int64, std::vector<std::int64_t>{a.i}, true);
    if (a.name == "value_ints") return owned_tensor(name, DataType::Int64, a.ints, false);
  }
  throw Error(
      ErrorKind::CorruptFile,
      fmt::format("{}: Constant node '{}' has no value Warden reads (value, value_float(s), value_int(s))",
                  source, n.name));
}

// The fewest inputs each operator the passes look at takes (ONNX's schemas; com.microsoft's for
// ORT's contrib ops): the passes index them, so a node with fewer is no graph at all.
struct Arity {
  std::string_view domain, op;
  std::size_t inputs;
};
constexpr Arity kArity[] = {
    {"", "Add", 2},
    {"", "Cast", 1},
    {"", "Concat", 1},
    {"", "ConstantOfShape", 1},
    {"", "CumSum", 2},
    {"", "DequantizeLinear", 2},
    {"", "Div", 2},
    {"", "DynamicQuantizeLinear", 1},
    {"", "Equal", 2},
    {"", "Erf", 1},
    {"", "Expand", 2},
    {"", "Gather", 2},
    {"", "Gemm", 2},
    {"", "LayerNormalization", 2},
    {"", "MatMul", 2},
    {"", "MatMulInteger", 2},
    {"", "Mul", 2},
    {"", "Not", 1},
    {"", "Pow", 2},
    {"", "Range", 3},
    {"", "ReduceSum", 1},
    {"", "ReduceL2", 1},
    {"", "Clip", 1},
    {"", "ReduceMean", 1},
    {"", "Relu", 1},
    {"", "Reshape", 2},
    {"", "Shape", 1},
    {"", "Slice", 3},
    {"", "Softmax", 1},
    {"", "Sqrt", 1},
    {"", "Squeeze", 1},
    {"", "Sub", 2},
    {"", "Tanh", 1},
    {"", "Transpose", 1},
    {"", "Unsqueeze", 1},
    {"", "Where", 3},
    {kMicrosoftDomain, "BiasGelu", 2},
    {kMicrosoftDomain, "DynamicQuantizeMatMul", 3},
    {kMicrosoftDomain, "FusedMatMul", 2},
    {kMicrosoftDomain, "Gelu", 1},
    {kMicrosoftDomain, "MatMulIntegerToFloat", 4},
    {kMicrosoftDomain, "SkipLayerNormalization", 3},
};

// Error(CorruptFile) for a node without an output, or with fewer (named) inputs than its
// operator takes.
void check_arity(const Node& n, std::string_view source) {
  if (n.outputs.empty() || n.outputs.front().empty()) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: node '{}' ({}) has no output", source, n.name, n.op_type));
  }
  for (const Arity& a : kArity) {  // (the reader has made "ai.onnx" the empty domain)
    if (a.domain != n.domain || a.op != n.op_type) continue;
    const bool named =
        n.inputs.size() >= a.inputs &&
        std::none_of(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(a.inputs),
                     [](const std::string& i) { return i.empty(); });
    if (!named) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: node '{}' ({}) has {} input(s); the operator takes at least {}", source,
                              n.name, n.op_type, n.inputs.size(), a.inputs));
    }
  }
}

}  // namespace

const Node* RewriteGraph::producer(std::string_view value) const noexcept {
  for (const Node& n : nodes) {
    if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
  }
  return nullptr;
}

std::optional<std::size_t> RewriteGraph::sole(std::string_view value, std::string_view op,
                                              std::size_t count) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.outputs.size() == 1 && n.outputs[0] == value) {
      if (n.op_type != op || !n.domain.empty() || readers(value) != count) return std::nullopt;
      return i;
    }
  }
  return std::nullopt;
}

std::size_t rewrite_all(RewriteGraph& graph,
                        const std::function<std::optional<Rewrite>(const RewriteGraph&, std::size_t)>& match,
                        bool checked) {
  std::size_t made = 0;
  for (bool again = true; again;) {
    again = false;
    for (std::size_t i = 0; i < graph.nodes.size() && !again; ++i) {
      std::optional<Rewrite> found = match(graph, i);
      if (!found) continue;
      if (!checked) {
        graph.replace(std::move(found->first), std::move(found->second));
      } else {
        RewriteGraph rewritten = graph;
        rewritten.replace(std::move(found->first), std::move(found->second));
        rewritten.remove_unused();
        if (!rewritten.well_formed()) continue;
        graph = std::move(rewritten);
      }
      ++made;
      again = true;  // indices moved: match afresh
    }
  }
  return made;
}

Tensor float_constant(std::string name, std::vector<std::int64_t> dims, const std::vector<float>& values) {
  Tensor t = owned_tensor(name, DataType::Float, values, false);
  t.dims = std::move(dims);
  return t;
}

bool is_last_axis_layer_norm(const Node& n) {
  const Attribute* axis = n.attribute("axis");
  return n.op_type == "LayerNormalization" && n.domain.empty() && n.inputs.size() == 3 &&
         n.outputs.size() == 1 && (axis == nullptr || axis->i == -1);
}

Attribute int_attribute(std::string name, std::int64_t value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::Int;
  a.i = value;
  return a;
}

Attribute float_attribute(std::string name, float value) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::Float;
  a.f = value;
  return a;
}

std::size_t readers_besides_shapes(const RewriteGraph& graph, std::string_view value) {
  std::size_t count = 0;
  for (const Node& n : graph.nodes) {
    if (n.op_type == "Shape" && n.domain.empty()) continue;
    count += static_cast<std::size_t>(std::count(n.inputs.begin(), n.inputs.end(), value));
  }
  for (const ValueInfo& v : graph.outputs) count += v.name == value ? 1 : 0;
  return count;
}

std::size_t RewriteGraph::readers(std::string_view value) const noexcept {
  std::size_t count = 0;
  for (const Node& n : nodes)
    count += static_cast<std::size_t>(std::count(n.inputs.begin(), n.inputs.end(), value));
  for (const ValueInfo& v : outputs) count += v.name == value ? 1 : 0;
  return count;
}

const Tensor* RewriteGraph::constant(std::string_view value) const noexcept {
  const auto it = constants.find(value);
  return it == constants.end() ? nullptr : &it->second;
}

bool RewriteGraph::scalar_near(std::string_view value, double want) const {
  const std::optional<double> v = scalar(value);
  const Tensor* t = constant(value);
  if (!v || t == nullptr) return false;
  const DataType type = t->type;
  const double step = type == DataType::Float16 ? 0x1p-11 : type == DataType::Bfloat16 ? 0x1p-8 : 1e-6;
  return std::fabs(*v - want) <= step * std::fabs(want);
}

std::optional<double> RewriteGraph::scalar(std::string_view value) const {
  const Tensor* t = constant(value);
  if (t == nullptr || t->element_count() != 1) return std::nullopt;
  switch (t->type) {
    case DataType::Float:
    case DataType::Float16:
    case DataType::Bfloat16:
    case DataType::Double:
      return static_cast<double>(t->to_floats()[0]);
    default:
      break;
  }
  if (data_type_size(t->type) == 0) return std::nullopt;
  return static_cast<double>(t->to_ints()[0]);
}

void RewriteGraph::replace(std::vector<std::size_t> remove, Node add) {
  std::sort(remove.begin(), remove.end());
  const std::size_t at = remove.back();
  nodes[at] = std::move(add);
  remove.pop_back();
  for (auto it = remove.rbegin(); it != remove.rend(); ++it)
    nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(*it));
}

std::size_t RewriteGraph::remove_unused() {
  std::size_t removed = 0;
  for (bool again = true; again;) {
    again = false;
    // Which nodes are read, decided before any node moves: `read` views the nodes' strings.
    std::vector<char> alive(nodes.size());
    {
      std::unordered_set<std::string_view> read;
      for (const Node& n : nodes) read.insert(n.inputs.begin(), n.inputs.end());
      for (const ValueInfo& v : outputs) read.insert(v.name);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        alive[i] = std::any_of(nodes[i].outputs.begin(), nodes[i].outputs.end(),
                               [&](const std::string& o) { return read.contains(o); });
      }
    }
    std::vector<Node> kept;
    kept.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (alive[i] != 0) kept.push_back(std::move(nodes[i]));
    }
    const std::size_t n = nodes.size() - kept.size();
    nodes = std::move(kept);
    if (n > 0) {
      removed += n;
      again = true;
    }
  }
  return removed;
}

bool RewriteGraph::well_formed() const {
  std::unordered_set<std::string_view> defined;
  for (const ValueInfo& v : inputs) defined.insert(v.name);
  for (const auto& [name, t] : constants) defined.insert(name);
  for (const Node& n : nodes) {
    for (const std::string& in : n.inputs) {
      if (!in.empty() && !defined.contains(in)) return false;
    }
    defined.insert(n.outputs.begin(), n.outputs.end());
  }
  return std::all_of(outputs.begin(), outputs.end(),
                     [&](const ValueInfo& v) { return defined.contains(v.name); });
}

RewriteGraph make_rewrite_graph(const Model& model, std::string_view source) {
  const auto opset = model.opsets.find("");
  if (opset == model.opsets.end()) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: the model imports no default (ai.onnx) opset", source));
  }
  if (opset->second < 11 || opset->second > 21) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: opset {} (Warden reads opsets 11 to 21)", source, opset->second));
  }
  RewriteGraph g;
  g.source = std::string(source);
  g.opset = opset->second;
  for (const Tensor& t : model.graph.initializers) g.constants.emplace(t.name, t);
  for (const ValueInfo& v : model.graph.inputs) {
    if (!g.constants.contains(v.name)) g.inputs.push_back(v);  // old exporters list initializers as inputs
  }
  g.outputs = model.graph.outputs;
  for (const std::size_t i : topological_order(model.graph, source)) {
    const Node& n = model.graph.nodes[i];
    check_arity(n, source);
    if (n.op_type == "Constant" && n.domain.empty()) {
      g.constants.insert_or_assign(n.outputs.front(), constant_value(n, source));
      continue;
    }
    g.nodes.push_back(n);
  }
  return g;
}

}  // namespace warden::model::onnx

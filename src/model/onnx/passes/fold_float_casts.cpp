#include "model/onnx/passes/fold_float_casts.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <string_view>

namespace warden::model::onnx {

namespace {

bool float_type(std::int64_t type) {
  return type == static_cast<std::int64_t>(DataType::Float) ||
         type == static_cast<std::int64_t>(DataType::Float16) ||
         type == static_cast<std::int64_t>(DataType::Bfloat16) ||
         type == static_cast<std::int64_t>(DataType::Double);
}

// The default-domain ops whose outputs have the type of their first input (Where: of its second).
bool keeps_input_type(std::string_view op) {
  static constexpr std::array<std::string_view, 33> kOps = {
      "Abs",     "Add",       "Clip",       "Concat",    "Div",      "Erf",
      "Exp",     "Expand",    "Gather",     "Gemm",      "Identity", "LayerNormalization",
      "Log",     "MatMul",    "Max",        "Min",       "Mul",      "Neg",
      "Pow",     "ReduceL2",  "ReduceMean", "ReduceSum", "Relu",     "Reshape",
      "Sigmoid", "Slice",     "Softmax",    "Sqrt",      "Squeeze",  "Sub",
      "Tanh",    "Transpose", "Unsqueeze"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

bool graph_output(const RewriteGraph& g, std::string_view value) {
  return std::any_of(g.outputs.begin(), g.outputs.end(), [&](const ValueInfo& v) { return v.name == value; });
}

bool graph_input(const RewriteGraph& g, std::string_view value) {
  return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == value; });
}

void rename_reads(RewriteGraph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) std::replace(n.inputs.begin(), n.inputs.end(), from, to);
}

// Removes the Cast at `at` (x -> y), its readers reading x instead; when y is a graph output, x
// takes y's name instead (so the graph keeps its output names). False when neither is possible
// (y a graph output and x one too, or not a node's output).
bool bypass(RewriteGraph& g, std::size_t at) {
  const std::string x = g.nodes[at].inputs[0];
  const std::string y = g.nodes[at].outputs[0];
  if (!graph_output(g, y)) {
    rename_reads(g, y, x);
  } else {
    if (graph_output(g, x) || graph_input(g, x) || g.constant(x) != nullptr || g.producer(x) == nullptr) {
      return false;
    }
    for (Node& n : g.nodes) std::replace(n.outputs.begin(), n.outputs.end(), x, y);
    rename_reads(g, x, y);
  }
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(at));
  return true;
}

}  // namespace

std::size_t fold_float_casts(RewriteGraph& graph) {
  std::set<std::string, std::less<>> floats;
  for (const ValueInfo& v : graph.inputs) {
    if (float_type(static_cast<std::int64_t>(v.type))) floats.insert(v.name);
  }
  for (const auto& [name, t] : graph.constants) {
    if (float_type(static_cast<std::int64_t>(t.type))) floats.insert(name);
  }
  std::size_t folded = 0;
  for (std::size_t i = 0; i < graph.nodes.size();) {
    Node& n = graph.nodes[i];
    if (!n.domain.empty() || n.outputs.empty() || n.inputs.empty()) {
      ++i;
      continue;
    }
    if (n.op_type == "Cast" && n.inputs.size() == 1 && n.outputs.size() == 1) {
      const auto to = std::find_if(n.attributes.begin(), n.attributes.end(),
                                   [](const Attribute& a) { return a.name == "to"; });
      if (to != n.attributes.end() && float_type(to->i)) {
        if (floats.contains(n.inputs[0])) {
          const std::string y = n.outputs[0];
          if (bypass(graph, i)) {
            floats.insert(y);  // the name a bypassed output's producer now writes
            ++folded;
            continue;
          }
        } else if (to->i != static_cast<std::int64_t>(DataType::Float)) {
          to->i = static_cast<std::int64_t>(DataType::Float);
          ++folded;
        }
        floats.insert(n.outputs[0]);
      }
      ++i;
      continue;
    }
    const bool where = n.op_type == "Where" && n.inputs.size() > 1;
    if ((where || keeps_input_type(n.op_type)) && floats.contains(where ? n.inputs[1] : n.inputs[0])) {
      for (const std::string& out : n.outputs) floats.insert(out);
    }
    ++i;
  }
  return folded;
}

}  // namespace warden::model::onnx

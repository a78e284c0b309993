#include "model/onnx/passes/fuse_gelu.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace warden::model::onnx {

namespace {

// From the Erf node `erf`: x, and the nodes of the pattern, when they are one.
std::optional<std::pair<std::vector<std::size_t>, Node>> match(const RewriteGraph& g, std::size_t erf) {
  const Node& e = g.nodes[erf];
  if (e.op_type != "Erf" || !e.domain.empty() || e.inputs.size() != 1 || g.readers(e.outputs[0]) != 1) {
    return std::nullopt;
  }
  // x / √2 or x · (1/√2).
  std::optional<std::size_t> scale;
  std::string x;
  for (const char* op : {"Div", "Mul"}) {
    if (auto s = g.sole(e.inputs[0], op); s && g.nodes[*s].inputs.size() == 2) {
      const Node& n = g.nodes[*s];
      const double want = std::string_view(op) == "Div" ? std::sqrt(2.0) : 1.0 / std::sqrt(2.0);
      for (int k = 0; k < 2; ++k) {
        if (g.scalar_near(n.inputs[1 - k], want) && (std::string_view(op) == "Mul" || k == 0)) {
          scale = s;
          x = n.inputs[k];
        }
      }
    }
  }
  if (!scale) return std::nullopt;
  // Erf(...) + 1, read once.
  std::optional<std::size_t> plus;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type == "Add" && n.domain.empty() && n.inputs.size() == 2 &&
        ((n.inputs[0] == e.outputs[0] && g.scalar_near(n.inputs[1], 1.0)) ||
         (n.inputs[1] == e.outputs[0] && g.scalar_near(n.inputs[0], 1.0)))) {
      plus = i;
    }
  }
  if (!plus || g.readers(g.nodes[*plus].outputs[0]) != 1) return std::nullopt;
  const std::string& one_plus = g.nodes[*plus].outputs[0];
  // Two Muls: {x, 0.5} and {that, 1 + erf}, or {x, 1 + erf} and {that, 0.5}.
  auto find_mul = [&](const std::string& a, const std::string& b) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op_type == "Mul" && n.domain.empty() && n.inputs.size() == 2 &&
          ((n.inputs[0] == a && n.inputs[1] == b) || (n.inputs[0] == b && n.inputs[1] == a))) {
        return i;
      }
    }
    return std::nullopt;
  };
  auto find_half = [&](const std::string& a) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op_type == "Mul" && n.domain.empty() && n.inputs.size() == 2 &&
          ((n.inputs[0] == a && g.scalar_near(n.inputs[1], 0.5)) ||
           (n.inputs[1] == a && g.scalar_near(n.inputs[0], 0.5)))) {
        return i;
      }
    }
    return std::nullopt;
  };
  std::optional<std::size_t> first;
  std::optional<std::size_t> last;
  if (auto m = find_mul(x, one_plus)) {  // (x · (1 + erf)) · 0.5
    first = m;
    if (g.readers(g.nodes[*m].outputs[0]) == 1) last = find_half(g.nodes[*m].outputs[0]);
  } else if (auto h = find_half(x)) {  // (0.5 · x) · (1 + erf)
    first = h;
    if (g.readers(g.nodes[*h].outputs[0]) == 1) last = find_mul(g.nodes[*h].outputs[0], one_plus);
  }
  if (!first || !last) return std::nullopt;
  Node gelu;
  gelu.name = fmt::format("Gelu/{}", g.nodes[*last].name);
  gelu.op_type = "Gelu";
  gelu.domain = kMicrosoftDomain;
  gelu.inputs = {x};
  gelu.outputs = g.nodes[*last].outputs;
  return std::pair{std::vector<std::size_t>{*scale, erf, *plus, *first, *last}, gelu};
}

}  // namespace

std::size_t fuse_gelu(RewriteGraph& graph) {
  return rewrite_all(graph, match);
}

}  // namespace warden::model::onnx

#include "model/onnx/graph_order.hpp"

#include <deque>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::model::onnx {

namespace {

std::string node_label(const Node& n, std::size_t index) {
  return fmt::format("node {} '{}' ({}{}{})", index, n.name, n.domain, n.domain.empty() ? "" : ".",
                     n.op_type);
}

}  // namespace

std::vector<std::size_t> topological_order(const Graph& graph, std::string_view source) {
  constexpr std::size_t kOutside = static_cast<std::size_t>(-1);  // a graph input or an initializer
  std::unordered_map<std::string, std::size_t> producer;
  for (const ValueInfo& v : graph.inputs) producer.emplace(v.name, kOutside);
  for (const Tensor& t : graph.initializers) producer.emplace(t.name, kOutside);  // may also be an input
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (n.outputs.empty()) {
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: {} has no outputs", source, node_label(n, i)));
    }
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;  // an omitted optional output
      const auto [it, added] = producer.emplace(out, i);
      if (!added) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: {} produces '{}', which {} already", source, node_label(n, i), out,
                                it->second == kOutside
                                    ? std::string("a graph input or initializer names")
                                    : node_label(graph.nodes[it->second], it->second) + " produces"));
      }
    }
  }
  // Kahn's algorithm: a node is ready when every producer of its inputs is placed.
  std::vector<std::size_t> waiting(graph.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> consumers(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) {
      if (in.empty()) continue;  // an omitted optional input
      const auto it = producer.find(in);
      if (it == producer.end()) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: {} reads '{}', which no graph input, initializer or node gives", source,
                                node_label(graph.nodes[i], i), in));
      }
      if (it->second != kOutside) {
        ++waiting[i];
        consumers[it->second].push_back(i);
      }
    }
  }
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(graph.nodes.size());
  while (!ready.empty()) {
    const std::size_t i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (const std::size_t c : consumers[i]) {
      if (--waiting[c] == 0) ready.push_back(c);
    }
  }
  if (order.size() != graph.nodes.size()) {
    for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
      if (waiting[i] != 0) {
        throw Error(ErrorKind::CorruptFile, fmt::format("{}: the graph has a cycle through {}", source,
                                                        node_label(graph.nodes[i], i)));
      }
    }
  }
  return order;
}

}  // namespace warden::model::onnx

#pragma once
// The first check an ONNX graph gets before any rewrite: that it is a graph at all. Every node
// input names a graph input, an initializer or another node's output; every value has one
// producer; and the nodes have a topological order (no cycle). ONNX requires the file's node
// list to be that order already; exporters follow it, but a hostile or broken file need not,
// so the order is computed here (Kahn's algorithm, stable: the file's order wherever it is
// valid) rather than trusted.

#include <cstddef>
#include <vector>

#include "model/onnx/onnx_model.hpp"

namespace warden::model::onnx {

// Node indices in an order where each node comes after the producers of its inputs.
// Error(CorruptFile) naming the node and the value for an undefined input, a value produced
// twice (or by a node and an initializer / graph input), a node with no outputs, or a cycle
// (naming a node on it). `source` names the file.
std::vector<std::size_t> topological_order(const Graph& graph, std::string_view source);

}  // namespace warden::model::onnx

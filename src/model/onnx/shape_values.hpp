#pragma once
// The shape computations exporters write around a Reshape — Shape(x), Gather of one dimension,
// Unsqueeze, Squeeze, Concat, Cast to an integer, and integer constants — evaluated
// symbolically: each element of the result is a constant or "dimension a of value x". A pass
// can then read Reshape(q, Concat(Unsqueeze(Gather(Shape(q), 0)), Unsqueeze(Gather(Shape(q), 1)),
// [12], [64])) as [q.0, q.1, 12, 64] whichever way the exporter spelled it, without knowing
// the batch or the sequence length.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

struct SymbolicDim {
  std::optional<std::int64_t> constant;  // a number, or else:
  std::string of;                        // dimension `axis` of this value
  std::int64_t axis = 0;
  friend bool operator==(const SymbolicDim&, const SymbolicDim&) = default;

  static SymbolicDim number(std::int64_t v) { return {v, {}, 0}; }
  static SymbolicDim dim(std::string value, std::int64_t a) { return {std::nullopt, std::move(value), a}; }
};

struct SymbolicValue {
  std::vector<SymbolicDim> elements;
  bool scalar = false;
};

// What the integer value `value` holds, or nullopt when it is not built only from the ops above
// (or indexes a Shape from the end, whose rank is not known here).
std::optional<SymbolicValue> symbolic_value(const RewriteGraph& graph, std::string_view value);

// The shape a Reshape node asks for, with a 0 (which copies the input's dimension unless
// allowzero is set: what ORT's optimiser leaves, [0, 0, 12, 64]) read as that dimension of the
// input; nullopt as symbolic_value.
std::optional<SymbolicValue> reshape_target(const RewriteGraph& graph, const Node& reshape);

}  // namespace warden::model::onnx

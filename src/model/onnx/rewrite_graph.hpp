#pragma once
// The graph the rewrite passes work on (in the style of ONNX Runtime's graph transformers):
// the nodes in topological order, the constants by name — initializers and the values of
// Constant nodes, which are folded away here — and the graph's inputs and outputs. A pass
// finds a subgraph it knows (a LayerNorm decomposition, an attention block, ...), checks that
// nothing outside reads its intermediate values, and replaces it with one node Warden's engine
// places; what no pass reduces is named in the load error.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/onnx/onnx_model.hpp"

namespace warden::model::onnx {

// The domain of the nodes only Warden's passes make.
inline constexpr const char* kWardenDomain = "warden";
// The domain of ONNX Runtime's contrib ops (Gelu, SkipLayerNormalization, ...).
inline constexpr const char* kMicrosoftDomain = "com.microsoft";

struct RewriteGraph {
  std::string source;  // the file, for errors
  std::int64_t opset = 0;
  std::vector<Node> nodes;  // topological order
  std::map<std::string, Tensor, std::less<>> constants;
  std::vector<ValueInfo> inputs;  // the graph inputs that are not constants
  std::vector<ValueInfo> outputs;

  // The node producing `value`, or null (a graph input, a constant, or nothing).
  [[nodiscard]] const Node* producer(std::string_view value) const noexcept;
  // The index of the node producing `value` when it is a default-domain `op` with one output
  // and `value` has exactly `readers` readers: a node a pattern may take with it.
  [[nodiscard]] std::optional<std::size_t> sole(std::string_view value, std::string_view op,
                                                std::size_t readers = 1) const;
  // How many node inputs and graph outputs read `value`.
  [[nodiscard]] std::size_t readers(std::string_view value) const noexcept;
  [[nodiscard]] const Tensor* constant(std::string_view value) const noexcept;
  // A constant of one element, as a float (FLOAT, FLOAT16, BFLOAT16, DOUBLE, or an integer type).
  [[nodiscard]] std::optional<double> scalar(std::string_view value) const;
  // Whether `value` is a one-element constant equal to `want` as closely as its type holds it:
  // within 1e-6 relative, or half a step of FLOAT16 / BFLOAT16 (a float16 file's √2 is 1.4140625).
  [[nodiscard]] bool scalar_near(std::string_view value, double want) const;
  // Replaces the nodes at `remove` (indices into `nodes`) by `add`, placed where the last removed
  // one was (its inputs are all produced before it), keeping the order topological.
  void replace(std::vector<std::size_t> remove, Node add);
  // Drops the nodes nothing reads (no node input, no graph output), repeatedly: the shape
  // computations a fused Reshape leaves behind. The number removed.
  std::size_t remove_unused();
  // Whether every node input (and graph output) is a graph input, a constant or the output of an
  // earlier node: what a rewrite must leave.
  [[nodiscard]] bool well_formed() const;
};

// A float constant made by a pass (a folded value), owning its bytes.
Tensor float_constant(std::string name, std::vector<std::int64_t> dims, const std::vector<float>& values);

// Whether `n` is a default-domain LayerNormalization over the last axis, with gamma and beta and
// one output: the form the embeddings and residual passes take (fuse_layer_norm makes it).
bool is_last_axis_layer_norm(const Node& n);

// A node's attribute made by a pass.
Attribute int_attribute(std::string name, std::int64_t value);
Attribute float_attribute(std::string name, float value);

// How many readers of `value` are not Shape nodes: the shape computations a pattern's Reshapes,
// Slices and Expands read go with it (under a checked rewrite, which drops them once unread).
std::size_t readers_besides_shapes(const RewriteGraph& graph, std::string_view value);

// One match of a pass's pattern: the nodes it covers (indices into `nodes`) and the node that
// replaces them.
using Rewrite = std::pair<std::vector<std::size_t>, Node>;

// Applies `match` (tried at every node index) until it matches nowhere; the number of rewrites.
// With `checked`, each rewrite is made on a copy, the nodes left unread are dropped, and the
// copy is kept only if the graph is still well formed (for patterns that take their shape
// computations along and cannot see every other reader).
std::size_t rewrite_all(RewriteGraph& graph,
                        const std::function<std::optional<Rewrite>(const RewriteGraph&, std::size_t)>& match,
                        bool checked = false);

// Orders and checks the graph (topological_order), and folds Constant nodes (value, value_float,
// value_floats, value_int, value_ints) into constants. Error(CorruptFile) as topological_order,
// or for a Constant node without a value; Error(Unsupported) for a model without the default
// opset or with one Warden does not know (below 11 or above 21).
RewriteGraph make_rewrite_graph(const Model& model, std::string_view source);

}  // namespace warden::model::onnx

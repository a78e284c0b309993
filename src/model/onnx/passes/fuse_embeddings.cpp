#include "model/onnx/passes/fuse_embeddings.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/onnx/shape_values.hpp"

namespace warden::model::onnx {

namespace {

bool is_input(const RewriteGraph& g, const std::string& value) {
  return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& v) { return v.name == value; });
}

// An integer constant of rank ≤ 1 as its values.
std::optional<std::vector<std::int64_t>> ints(const RewriteGraph& g, const std::string& value) {
  const Tensor* t = g.constant(value);
  if (t == nullptr || t->dims.size() > 1 || t->type == DataType::Float || t->type == DataType::Float16 ||
      t->type == DataType::Bfloat16 || t->type == DataType::Double || data_type_size(t->type) == 0) {
    return std::nullopt;
  }
  return t->to_ints();
}

class Pattern {
 public:
  explicit Pattern(const RewriteGraph& g) : g_(g) {}

  // The default-domain `op` producing `value`, read by `count` nodes besides Shape nodes;
  // remembered as part of the match.
  const Node* take(const std::string& value, std::string_view op, std::size_t count = 1) {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.outputs.size() == 1 && n.outputs[0] == value) {
        if (n.op_type != op || !n.domain.empty() || readers_besides_shapes(g_, value) != count)
          return nullptr;
        nodes_.push_back(i);
        return &n;
      }
    }
    return nullptr;
  }

  struct Leaf {
    const Node* gather;
    std::string table;
  };

  // The Gathers (axis 0, from a constant [rows x width] table) summed by the Adds producing
  // `value`.
  bool leaves(const std::string& value, std::vector<Leaf>& out) {
    const Node* n = g_.producer(value);
    if (n == nullptr) return false;
    if (n->op_type == "Add" && take(value, "Add") != nullptr) {
      return n->inputs.size() == 2 && leaves(n->inputs[0], out) && leaves(n->inputs[1], out);
    }
    if (n->op_type != "Gather" || take(value, "Gather") == nullptr) return false;
    const Tensor* table = g_.constant(n->inputs[0]);
    const Attribute* axis = n->attribute("axis");
    if (table == nullptr || table->dims.size() != 2 || (axis != nullptr && axis->i != 0)) return false;
    out.push_back({n, n->inputs[0]});
    return true;
  }

  // Whether `d` is the sequence length: dimension 1 of input_ids, or of the word Gather's output.
  static bool sequence(const SymbolicDim& d, const std::string& ids, const std::string& words) {
    return d == SymbolicDim::dim(ids, 1) || d == SymbolicDim::dim(words, 1);
  }

  // arange(seq) as HF's position_ids buffer sliced, or as Range(0, seq, 1); through an
  // Unsqueeze of axis 0 and an Expand.
  bool absolute_positions(std::string value, const std::string& ids, const std::string& words) {
    if (const Node* n = g_.producer(value); n != nullptr && n->op_type == "Expand") {
      if (take(value, "Expand") == nullptr) return false;
      value = n->inputs[0];
    }
    const Node* n = g_.producer(value);
    if (n == nullptr) return false;
    if (n->op_type == "Unsqueeze") {
      const auto axes = n->inputs.size() > 1 ? ints(g_, n->inputs[1]) : std::nullopt;
      const Attribute* a = n->attribute("axes");
      if (take(value, "Unsqueeze") == nullptr ||
          (a != nullptr ? a->ints : axes.value_or(std::vector<std::int64_t>{})) !=
              std::vector<std::int64_t>{0}) {
        return false;
      }
      value = n->inputs[0];
      const Node* range = take(value, "Range");
      if (range == nullptr || range->inputs.size() != 3 || g_.scalar(range->inputs[0]) != 0.0 ||
          g_.scalar(range->inputs[2]) != 1.0) {
        return false;
      }
      const auto limit = symbolic_value(g_, range->inputs[1]);
      return limit && limit->elements.size() == 1 && sequence(limit->elements[0], ids, words);
    }
    const Node* slice = take(value, "Slice");
    if (slice == nullptr || slice->inputs.size() < 3) return false;
    const Tensor* buffer = g_.constant(slice->inputs[0]);
    if (buffer == nullptr || buffer->dims.empty() || buffer->dims.size() > 2 ||
        (buffer->dims.size() == 2 && buffer->dims[0] != 1) || data_type_size(buffer->type) == 0 ||
        buffer->type == DataType::Float) {
      return false;
    }
    const std::vector<std::int64_t> values = buffer->to_ints();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != static_cast<std::int64_t>(i)) return false;
    }
    const auto rank = static_cast<std::int64_t>(buffer->dims.size());
    const auto starts = ints(g_, slice->inputs[1]);
    const auto ends = symbolic_value(g_, slice->inputs[2]);
    const auto axes = slice->inputs.size() > 3 && !slice->inputs[3].empty() ? ints(g_, slice->inputs[3])
                                                                            : std::vector<std::int64_t>{0};
    const auto steps = slice->inputs.size() > 4 && !slice->inputs[4].empty() ? ints(g_, slice->inputs[4])
                                                                             : std::vector<std::int64_t>{1};
    return starts == std::vector<std::int64_t>{0} && ends && ends->elements.size() == 1 &&
           sequence(ends->elements[0], ids, words) && axes && axes->size() == 1 &&
           ((*axes)[0] == rank - 1 || (*axes)[0] == -1) && steps == std::vector<std::int64_t>{1};
  }

  // RoBERTa's create_position_ids_from_input_ids: Add(Cast(Mul(CumSum(m, 1), m)), p) with
  // m = Cast(Not(Equal(input_ids, p))); the padding index p, or nullopt.
  std::optional<std::int64_t> padding_positions(const std::string& value, const std::string& ids) {
    const Node* add = take(value, "Add");
    if (add == nullptr || add->inputs.size() != 2) return std::nullopt;
    const std::optional<double> p = g_.scalar(add->inputs[1]);
    if (!p || *p < 0 || *p != static_cast<double>(static_cast<std::int64_t>(*p))) return std::nullopt;
    std::string v = add->inputs[0];
    if (const Node* c = g_.producer(v); c != nullptr && c->op_type == "Cast") {
      if (take(v, "Cast") == nullptr) return std::nullopt;
      v = c->inputs[0];
    }
    const Node* mul = take(v, "Mul");
    if (mul == nullptr || mul->inputs.size() != 2) return std::nullopt;
    const Node* cumsum = take(mul->inputs[0], "CumSum");
    const auto set = [&](const char* flag) {
      const Attribute* a = cumsum->attribute(flag);
      return a != nullptr && a->i != 0;
    };
    if (cumsum == nullptr || cumsum->inputs.size() != 2 || cumsum->inputs[0] != mul->inputs[1] ||
        g_.scalar(cumsum->inputs[1]) != 1.0 || set("exclusive") || set("reverse")) {
      return std::nullopt;
    }
    const Node* m = take(mul->inputs[1], "Cast", 2);  // read by the CumSum and the Mul
    if (m == nullptr) return std::nullopt;
    const Node* not_equal = take(m->inputs[0], "Not");
    const Node* equal = not_equal != nullptr ? take(not_equal->inputs[0], "Equal") : nullptr;
    if (equal == nullptr || equal->inputs.size() != 2 || equal->inputs[0] != ids ||
        g_.scalar(equal->inputs[1]) != *p) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(*p);
  }

  // Indices that are all zero: a constant of zeros through Slice, Expand, Unsqueeze, Reshape,
  // Squeeze and Cast (input 0 each; their shape inputs go with them).
  bool zeros(std::string value) {
    for (const Node* n = g_.producer(value); n != nullptr; n = g_.producer(value)) {
      static constexpr std::string_view kPassing[] = {"Slice",   "Expand",  "Unsqueeze",
                                                      "Reshape", "Squeeze", "Cast"};
      if (std::find(std::begin(kPassing), std::end(kPassing), n->op_type) == std::end(kPassing) ||
          take(value, n->op_type) == nullptr) {
        return false;
      }
      value = n->inputs[0];
    }
    const Tensor* t = g_.constant(value);
    if (t == nullptr || t->type == DataType::Float || data_type_size(t->type) == 0) return false;
    const std::vector<std::int64_t> values = t->to_ints();
    return std::all_of(values.begin(), values.end(), [](std::int64_t v) { return v == 0; });
  }

  [[nodiscard]] const std::vector<std::size_t>& nodes() const noexcept { return nodes_; }
  void add(std::size_t i) { nodes_.push_back(i); }
  // Forgets the nodes taken since nodes().size() was `mark` (an alternative that did not match).
  void rollback(std::size_t mark) { nodes_.resize(mark); }

 private:
  const RewriteGraph& g_;
  std::vector<std::size_t> nodes_;
};

// From the LayerNormalization node `at`.
std::optional<Rewrite> match(const RewriteGraph& g, std::size_t at) {
  const Node& ln = g.nodes[at];
  if (!is_last_axis_layer_norm(ln)) return std::nullopt;
  Pattern p(g);
  p.add(at);
  std::vector<Pattern::Leaf> leaves;
  if (!p.leaves(ln.inputs[0], leaves) || leaves.size() < 2 || leaves.size() > 3) return std::nullopt;
  // The words: the Gather at a graph input, or of two such the one not named as token types.
  std::vector<const Pattern::Leaf*> at_inputs;
  for (const Pattern::Leaf& l : leaves) {
    if (is_input(g, l.gather->inputs[1])) at_inputs.push_back(&l);
  }
  if (at_inputs.empty() || at_inputs.size() > 2) return std::nullopt;
  const Pattern::Leaf* words = at_inputs.front();
  const Pattern::Leaf* types = nullptr;
  if (at_inputs.size() == 2) {
    const bool first_types = at_inputs[0]->gather->inputs[1].find("type") != std::string::npos;
    words = at_inputs[first_types ? 1 : 0];
    types = at_inputs[first_types ? 0 : 1];
  }
  const std::string& ids = words->gather->inputs[1];
  const Pattern::Leaf* positions = nullptr;
  std::int64_t padding_idx = -1;
  bool zero_types = false;
  for (const Pattern::Leaf& l : leaves) {
    if (&l == words || &l == types) continue;
    const std::string& index = l.gather->inputs[1];
    const std::size_t mark = p.nodes().size();
    if (positions == nullptr && p.absolute_positions(index, ids, words->gather->outputs[0])) {
      positions = &l;
      continue;
    }
    p.rollback(mark);
    if (positions == nullptr && (padding_idx = p.padding_positions(index, ids).value_or(-1)) >= 0) {
      positions = &l;
      continue;
    }
    p.rollback(mark);
    if (types != nullptr || !p.zeros(index)) return std::nullopt;
    types = &l;
    zero_types = true;
  }
  if (positions == nullptr) return std::nullopt;
  const Attribute* eps = ln.attribute("epsilon");

  Node e;
  e.name = fmt::format("Embeddings/{}", ln.name);
  e.op_type = "Embeddings";
  e.domain = kWardenDomain;
  e.inputs = {ids,
              types != nullptr && !zero_types ? types->gather->inputs[1] : std::string(),
              words->table,
              positions->table,
              types != nullptr ? types->table : std::string(),
              ln.inputs[1],
              ln.inputs[2]};
  e.outputs = ln.outputs;
  e.attributes = {float_attribute("epsilon", eps != nullptr ? eps->f : 1e-5F),
                  int_attribute("padding_idx", padding_idx), int_attribute("zero_types", zero_types ? 1 : 0)};
  return Rewrite{p.nodes(), e};
}

}  // namespace

std::size_t fuse_embeddings(RewriteGraph& graph) {
  return rewrite_all(graph, match, true);
}

}  // namespace warden::model::onnx

// topological_order (src/model/onnx/graph_order.hpp): a graph's nodes after their producers
// whatever the file's order, and cycles, undefined inputs and values produced twice named.

#include "model/onnx/graph_order.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace warden::model::onnx {
namespace {

Node op(std::string name, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = "Add";
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

std::string order_error(const Graph& g) {
  try {
    (void)topological_order(g, "g.onnx");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    return e.what();
  }
  return "ordered";
}

TEST(OnnxGraphOrder, NodesComeAfterTheirProducersWhateverTheFileOrder) {
  Graph g;
  g.inputs.push_back({"x", DataType::Float, std::nullopt});
  g.nodes = {op("c", {"b", "x"}, {"c"}), op("a", {"x", ""}, {"a"}), op("b", {"a"}, {"b"}),
             op("d", {"x"}, {"d"})};
  EXPECT_EQ(topological_order(g, "g.onnx"), (std::vector<std::size_t>{1, 3, 2, 0}));
  g.nodes = {op("a", {"x"}, {"a"}), op("b", {"a"}, {"b"})};  // already sorted: kept
  EXPECT_EQ(topological_order(g, "g.onnx"), (std::vector<std::size_t>{0, 1}));
}

TEST(OnnxGraphOrder, CyclesUndefinedInputsAndDoubleProducersAreNamed) {
  Graph g;
  g.inputs.push_back({"x", DataType::Float, std::nullopt});
  g.nodes = {op("a", {"x", "c"}, {"a"}), op("b", {"a"}, {"b"}), op("c", {"b"}, {"c"})};
  EXPECT_NE(order_error(g).find("cycle through node 0 'a'"), std::string::npos) << order_error(g);
  g.nodes = {op("a", {"x", "nowhere"}, {"a"})};
  EXPECT_NE(order_error(g).find("reads 'nowhere'"), std::string::npos) << order_error(g);
  g.nodes = {op("a", {"x"}, {"y"}), op("b", {"x"}, {"y"})};
  EXPECT_NE(order_error(g).find("produces 'y', which node 0 'a'"), std::string::npos) << order_error(g);
  g.nodes = {op("a", {"x"}, {"x"})};
  EXPECT_NE(order_error(g).find("a graph input or initializer"), std::string::npos) << order_error(g);
  g.nodes = {op("a", {"x"}, {})};
  EXPECT_NE(order_error(g).find("has no outputs"), std::string::npos) << order_error(g);
}

}  // namespace
}  // namespace warden::model::onnx

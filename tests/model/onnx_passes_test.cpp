// The ONNX rewrite passes (src/model/onnx/passes/) on graphs Debian's torch.onnx.export wrote
// (tools/onnx_fixtures/make_pass_fixtures.py): each pattern the exporter emits becomes the one
// node Warden places, with the constants it needs; a near miss is left alone.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "model/onnx/passes/fold_float_casts.hpp"
#include "model/onnx/passes/fuse_attention.hpp"
#include "model/onnx/passes/fuse_attention_mask.hpp"
#include "model/onnx/passes/fuse_dense.hpp"
#include "model/onnx/passes/fuse_gelu.hpp"
#include "model/onnx/passes/fuse_layer_norm.hpp"
#include "model/onnx/rewrite_graph.hpp"
#include "model/onnx/shape_values.hpp"

namespace warden::model::onnx {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(WARDEN_TEST_DATA) / "onnx";

std::size_t count_ops(const RewriteGraph& g, std::string_view op) {
  return static_cast<std::size_t>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op; }));
}

TEST(OnnxRewriteGraph, ConstantNodesBecomeConstants) {
  const ModelFile file(kData / "layer_norm_opset14.onnx");
  const RewriteGraph g = make_rewrite_graph(file.model(), "layer_norm_opset14.onnx");
  EXPECT_EQ(g.opset, 14);
  EXPECT_EQ(count_ops(g, "Constant"), 0U);
  ASSERT_EQ(g.inputs.size(), 1U);
  EXPECT_EQ(g.inputs[0].name, "x");
  // The Pow's exponent and the epsilon were Constant nodes.
  std::size_t scalars = 0;
  for (const auto& [name, t] : g.constants) scalars += t.element_count() == 1 ? 1 : 0;
  EXPECT_EQ(scalars, 2U);
}

TEST(OnnxPasses, LayerNormFromTorchsOpset14DecompositionIsOneNode) {
  const ModelFile file(kData / "layer_norm_opset14.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "layer_norm_opset14.onnx");
  EXPECT_EQ(fuse_layer_norm(g), 1U);
  ASSERT_EQ(count_ops(g, "LayerNormalization"), 1U);
  for (const char* gone : {"ReduceMean", "Sub", "Pow", "Sqrt", "Div", "Mul"})
    EXPECT_EQ(count_ops(g, gone), 0U) << gone;
  const Node& ln = *std::find_if(g.nodes.begin(), g.nodes.end(),
                                 [](const Node& n) { return n.op_type == "LayerNormalization"; });
  EXPECT_EQ(ln.outputs, std::vector<std::string>{"y"});
  ASSERT_EQ(ln.inputs.size(), 3U);
  ASSERT_NE(ln.attribute("epsilon"), nullptr);
  EXPECT_EQ(ln.attribute("epsilon")->f, 1e-12F);
  EXPECT_EQ(ln.attribute("axis")->i, -1);
  // Its input is the linear layer's output; gamma and beta are the module's weights, as in the
  // opset 17 export of the same module.
  const Node* add = g.producer(ln.inputs[0]);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op_type, "Add");
  const ModelFile file17(kData / "layer_norm_opset17.onnx");
  RewriteGraph g17 = make_rewrite_graph(file17.model(), "layer_norm_opset17.onnx");
  EXPECT_EQ(fuse_layer_norm(g17), 0U);  // already one node
  const Node& ln17 = *std::find_if(g17.nodes.begin(), g17.nodes.end(),
                                   [](const Node& n) { return n.op_type == "LayerNormalization"; });
  for (std::size_t k = 1; k < 3; ++k) {
    const Tensor* a = g.constant(ln.inputs[k]);
    const Tensor* b = g17.constant(ln17.inputs[k]);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(a->to_floats(), b->to_floats()) << k;
  }
  EXPECT_EQ(ln17.attribute("epsilon")->f, 1e-12F);
}

TEST(OnnxPasses, GeluFromTorchsErfFormAndHfsOwnIsOneNodeEach) {
  const ModelFile file(kData / "gelu_opset14.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "gelu_opset14.onnx");
  EXPECT_EQ(fuse_gelu(g), 2U);
  EXPECT_EQ(count_ops(g, "Gelu"), 2U);
  for (const char* gone : {"Erf", "Div", "Mul"}) EXPECT_EQ(count_ops(g, gone), 0U) << gone;
  EXPECT_EQ(count_ops(g, "MatMul"), 2U);
  EXPECT_EQ(count_ops(g, "Add"), 2U);  // the linear layers' biases stay for the dense pass
  for (const Node& n : g.nodes) {
    if (n.op_type != "Gelu") continue;
    EXPECT_EQ(n.domain, "com.microsoft");
    ASSERT_EQ(n.inputs.size(), 1U);
    const Node* bias = g.producer(n.inputs[0]);
    ASSERT_NE(bias, nullptr);
    EXPECT_EQ(bias->op_type, "Add");  // GELU of the linear layer's output
  }
  EXPECT_EQ(g.nodes.back().outputs, std::vector<std::string>{"y"});
}

TEST(OnnxPasses, LinearLayersBecomeDenseNodesWithTheirBiases) {
  const ModelFile file(kData / "gelu_opset14.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "gelu_opset14.onnx");
  EXPECT_EQ(fuse_gelu(g), 2U);
  EXPECT_EQ(fuse_dense(g), 2U);
  // Linear, Gelu, Linear, Gelu: nothing else is left.
  ASSERT_EQ(g.nodes.size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) {
    const Node& n = g.nodes[i];
    EXPECT_EQ(n.op_type, i % 2 == 0 ? "Dense" : "Gelu") << i;
    if (n.op_type != "Dense") continue;
    EXPECT_EQ(n.domain, kWardenDomain);
    ASSERT_EQ(n.inputs.size(), 3U);
    EXPECT_EQ(g.constant(n.inputs[1])->dims, (std::vector<std::int64_t>{8, 8}));
    EXPECT_EQ(g.constant(n.inputs[2])->dims, (std::vector<std::int64_t>{8}));
  }
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  EXPECT_EQ(g.nodes.back().outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(fuse_dense(g), 0U);  // nothing left to make
}

// HF's transpose_for_scores and the view back, as torch exports them: each Reshape's shape is
// read as "the input's own batch and sequence dimensions, then constants".
TEST(OnnxShapeValues, ReshapeShapesInHfsAttentionAreReadSymbolically) {
  const ModelFile file(kData / "attention_opset14.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "attention_opset14.onnx");
  EXPECT_EQ(fuse_dense(g), 3U);  // query, key, value
  std::size_t split = 0, merge = 0;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Reshape") continue;
    const auto shape = symbolic_value(g, n.inputs[1]);
    ASSERT_TRUE(shape.has_value()) << n.name;
    EXPECT_FALSE(shape->scalar);
    const std::string& x = n.inputs[0];
    if (shape->elements.size() == 4) {
      EXPECT_EQ(shape->elements, (std::vector<SymbolicDim>{SymbolicDim::dim(x, 0), SymbolicDim::dim(x, 1),
                                                           SymbolicDim::number(4), SymbolicDim::number(4)}));
      ++split;
    } else {
      EXPECT_EQ(shape->elements, (std::vector<SymbolicDim>{SymbolicDim::dim(x, 0), SymbolicDim::dim(x, 1),
                                                           SymbolicDim::number(16)}));
      ++merge;
    }
  }
  EXPECT_EQ(split, 3U);
  EXPECT_EQ(merge, 1U);
  // Not a shape computation: an activation, a float constant.
  EXPECT_FALSE(symbolic_value(g, "hidden").has_value());
  for (const auto& [name, t] : g.constants) {
    if (t.type == DataType::Float) {
      EXPECT_FALSE(symbolic_value(g, name).has_value()) << name;
    }
  }
}

TEST(OnnxPasses, HfsAttentionIsOneNodeAndItsShapePlumbingGoes) {
  const ModelFile file(kData / "attention_opset14.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "attention_opset14.onnx");
  EXPECT_EQ(fuse_dense(g), 3U);
  EXPECT_EQ(fuse_attention(g), 1U);
  EXPECT_EQ(g.remove_unused(), 0U);  // the reshapes' Shape/Gather/Unsqueeze/Concat went with them
  EXPECT_TRUE(g.well_formed());
  ASSERT_EQ(count_ops(g, "Attention"), 1U);
  for (const char* gone : {"Reshape", "Transpose", "Softmax", "MatMul", "Shape", "Gather", "Concat"}) {
    EXPECT_EQ(count_ops(g, gone), 0U) << gone;
  }
  // A copy: the mask pass below rewrites the node list.
  const Node a =
      *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "Attention"; });
  EXPECT_EQ(a.domain, kWardenDomain);
  EXPECT_EQ(a.attribute("num_heads")->i, 4);
  EXPECT_EQ(a.attribute("scale")->f, 0.5F);  // 1/√4, from the file's Div by 2
  ASSERT_EQ(a.inputs.size(), 4U);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(g.producer(a.inputs[k])->op_type, "Dense") << k;
  EXPECT_EQ(a.outputs, std::vector<std::string>{"context"});
  // What is left besides: the three dense layers and the mask's Unsqueeze/Cast/Sub/Mul, which
  // the mask pass makes one node of.
  EXPECT_EQ(g.producer(a.inputs[3])->op_type, "Mul");
  EXPECT_EQ(g.nodes.size(), 3U + 1U + 5U);
  EXPECT_EQ(fuse_attention_mask(g), 1U);
  ASSERT_EQ(g.nodes.size(), 3U + 1U + 1U);
  const Node* mask = g.producer(a.inputs[3]);
  EXPECT_EQ(mask->op_type, "AttentionMask");
  EXPECT_EQ(mask->inputs, std::vector<std::string>{"attention_mask"});
  EXPECT_TRUE(g.well_formed());
}

TEST(OnnxPasses, ANearMissIsLeftAsItIs) {
  const ModelFile file(kData / "layer_norm_opset14.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "layer_norm_opset14.onnx");
  // The variance squared by 3 instead of 2: not a LayerNorm.
  for (const Node& n : g.nodes) {
    if (n.op_type != "Pow") continue;
    Tensor& exponent = g.constants.at(n.inputs[1]);
    auto three = std::make_shared<float>(3.0F);
    exponent.data = std::as_bytes(std::span<const float>(three.get(), 1));
    exponent.owner = three;
    exponent.type = DataType::Float;
  }
  EXPECT_EQ(fuse_layer_norm(g), 0U);
  EXPECT_EQ(count_ops(g, "Pow"), 1U);
  // And an intermediate value read outside the pattern keeps the pattern too.
  RewriteGraph h = make_rewrite_graph(file.model(), "layer_norm_opset14.onnx");
  for (const Node& n : h.nodes) {
    if (n.op_type == "Sqrt") h.outputs.push_back({n.outputs[0], DataType::Float, std::nullopt});
  }
  EXPECT_EQ(fuse_layer_norm(h), 0U);
}

// A float16 file (tools/onnx_fixtures/make_fp16_fixtures.py: transformers.js's conversion) has
// the Casts of its float32 export plus one to FLOAT16 after the mask's Cast and one to FLOAT
// before the output; after the pass, only the export's remain and the output keeps its name.
TEST(OnnxPasses, AFloat16FilesCastsBetweenFloatTypesGo) {
  const auto casts_to = [](const RewriteGraph& g, DataType to) {
    return std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) {
      return n.op_type == "Cast" && n.attribute("to") != nullptr &&
             n.attribute("to")->i == static_cast<std::int64_t>(to);
    });
  };
  const ModelFile fp32_file(kData / "bert" / "model_opset14.onnx");
  const RewriteGraph fp32 = make_rewrite_graph(fp32_file.model(), "model_opset14.onnx");
  const ModelFile file(kData / "bert" / "model_fp16.onnx");
  RewriteGraph g = make_rewrite_graph(file.model(), "model_fp16.onnx");
  EXPECT_GT(casts_to(g, DataType::Float16), 0);
  EXPECT_EQ(fold_float_casts(g), 2U);
  EXPECT_EQ(casts_to(g, DataType::Float16), 0);
  EXPECT_EQ(count_ops(g, "Cast"), count_ops(fp32, "Cast"));
  ASSERT_EQ(g.outputs.size(), 1U);
  EXPECT_EQ(g.outputs[0].name, "last_hidden_state");
  EXPECT_NE(g.producer("last_hidden_state"), nullptr);
  EXPECT_TRUE(g.well_formed());
  // A Cast of an integer to FLOAT16 (the older converter's form) is read as one to FLOAT; a Cast to
  // FLOAT of a value not known to hold floats is kept.
  Node cast;
  cast.name = "int_to_half";
  cast.op_type = "Cast";
  cast.inputs = {"attention_mask"};
  cast.outputs = {"half_mask"};
  cast.attributes = {int_attribute("to", static_cast<std::int64_t>(DataType::Float16))};
  g.nodes.insert(g.nodes.begin(), cast);
  g.outputs.push_back({"half_mask", DataType::Float16, std::nullopt});
  EXPECT_EQ(fold_float_casts(g), 1U);
  EXPECT_EQ(g.nodes.front().attribute("to")->i, static_cast<std::int64_t>(DataType::Float));
}

}  // namespace
}  // namespace warden::model::onnx

// ONNX files of the BERT, XLM-RoBERTa and DistilBERT fixtures, written by Debian's
// torch.onnx.export from modules that follow transformers' modelling code at opsets 14 and 17
// (tools/onnx_fixtures/make_encoder_fixtures.py), load as encoders on Warden's kernels and give
// ONNX Runtime's outputs on the same files (tools/onnx_fixtures/ort_outputs.mjs wrote them,
// with the inputs, to ort_outputs.json): padding, a second segment's token types and RoBERTa's
// padding id inside a text included.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/encoder_model.hpp"
#include "model/onnx/encoder_graph.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(WARDEN_TEST_DATA) / "onnx";

struct OrtCase {
  std::vector<std::vector<std::int64_t>> ids, mask, types;
  std::vector<float> hidden;  // [sequences x length x hidden]
};

std::vector<std::vector<std::int64_t>> rows(const simdjson::dom::object& inputs, std::string_view name) {
  std::vector<std::vector<std::int64_t>> out;
  for (const simdjson::dom::element row : inputs[name].get_array()) {
    auto& r = out.emplace_back();
    for (const simdjson::dom::element v : row.get_array()) r.push_back(int64_t(v));
  }
  return out;
}

OrtCase ort_case(const std::string& family, const std::string& file) {
  simdjson::dom::parser parser;
  const std::string text = read_file(kData / family / "ort_outputs.json");
  const simdjson::dom::element root = parser.parse(text);
  const simdjson::dom::object inputs = root["inputs"];
  OrtCase c;
  c.ids = rows(inputs, "input_ids");
  c.mask = rows(inputs, "attention_mask");
  c.types = rows(inputs, "token_type_ids");
  for (const simdjson::dom::element v : root["outputs"][file]["data"].get_array()) {
    c.hidden.push_back(static_cast<float>(double(v)));
  }
  return c;
}

// The folder as an optimum export lays it out: config.json and model.onnx.
fs::path onnx_folder(const testing::TempDir& tmp, const std::string& family, const std::string& file) {
  const fs::path dir = tmp / "model";
  fs::create_directories(dir);
  fs::copy_file(kData / family / "config.json", dir / "config.json");
  fs::copy_file(kData / family / file, dir / "model.onnx");
  return dir;
}

// The largest |Warden - ORT| over the unpadded tokens.
float max_diff_to_ort(const std::string& family, const std::string& file) {
  const testing::TempDir tmp;
  const auto model = load_encoder_model(onnx_folder(tmp, family, file));
  const OrtCase c = ort_case(family, file);
  TokenBatch batch;
  for (std::size_t s = 0; s < c.ids.size(); ++s) {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint32_t> types;
    for (std::size_t t = 0; t < c.ids[s].size() && c.mask[s][t] != 0; ++t) {
      ids.push_back(static_cast<std::uint32_t>(c.ids[s][t]));
      types.push_back(family == "bert" ? static_cast<std::uint32_t>(c.types[s][t])
                                       : 0U);  // the graph's inputs
    }
    batch.add(ids, types);
  }
  model->encoder.validate(batch);
  EncoderWorkspace ws;
  const std::span<const float> hidden = model->encoder.forward(batch, ws, nullptr);
  const std::size_t h = model->encoder.dims().hidden;
  const std::size_t length = c.ids.front().size();
  EXPECT_EQ(c.hidden.size(), c.ids.size() * length * h);
  float worst = 0.0F;
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    for (std::size_t t = 0; t < batch.length(s); ++t) {
      for (std::size_t j = 0; j < h; ++j) {
        const float ours = hidden[(batch.offsets[s] + t) * h + j];
        const float theirs = c.hidden[(s * length + t) * h + j];
        worst = std::max(worst, std::abs(ours - theirs));
      }
    }
  }
  return worst;
}

class OnnxEncoderVsOrt : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(OnnxEncoderVsOrt, GivesOnnxRuntimesHiddenStates) {
  const auto [family, file] = GetParam();
  const float diff = max_diff_to_ort(family, file);
  RecordProperty("max_abs_diff", std::to_string(diff));
  std::printf("%s/%s: max |Warden - ORT| = %.3g\n", family, file, static_cast<double>(diff));
  EXPECT_LE(diff, 1e-4F);
}

INSTANTIATE_TEST_SUITE_P(Families, OnnxEncoderVsOrt,
                         ::testing::Values(std::pair{"bert", "model_opset14.onnx"},
                                           std::pair{"bert", "model_opset17.onnx"},
                                           std::pair{"bert", "model_ort_all.onnx"},
                                           std::pair{"xlm-roberta", "model_opset14.onnx"},
                                           std::pair{"xlm-roberta", "model_opset17.onnx"},
                                           std::pair{"xlm-roberta", "model_ort_all.onnx"},
                                           std::pair{"distilbert", "model_opset14.onnx"},
                                           std::pair{"distilbert", "model_opset17.onnx"},
                                           std::pair{"distilbert", "model_ort_all.onnx"}));

// A graph with a node no pass places is a load error naming that node and how far the encoder
// was read — not a slower interpreter, not a wrong answer.
TEST(OnnxEncoderErrors, ANodeNoPassPlacesIsNamedWithWhereReadingStopped) {
  onnx::ModelFile file(kData / "bert" / "model_opset14.onnx");
  onnx::Model model = file.model();
  bool changed = false;
  for (onnx::Node& n : model.graph.nodes) {
    if (!changed && n.op_type == "Erf" && n.name.find("layer.1") != std::string::npos) {
      n.op_type = "Sinh";  // the second layer's GELU is no longer one
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  try {
    (void)onnx::read_encoder_graph(model, "edited.onnx");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("edited.onnx"), std::string::npos) << what;
    EXPECT_NE(what.find("(Div in ai.onnx)"), std::string::npos) << what;  // the first node left of the GELU
    EXPECT_NE(what.find("the embeddings and 1 layer(s)"), std::string::npos) << what;
  }
}

TEST(OnnxEncoderErrors, AConfigThatDisagreesWithTheGraphIsNamed) {
  const testing::TempDir tmp;
  const fs::path dir = onnx_folder(tmp, "bert", "model_opset17.onnx");
  testing::edit_config(dir, "\"num_attention_heads\": 4", "\"num_attention_heads\": 2");
  testing::expect_load_error(dir, ErrorKind::CorruptFile,
                             "layer 0 has 4 attention heads, num_attention_heads 2");
}

TEST(OnnxEncoderErrors, AFamilyWhoseExportsAreNotReducedYetSaysSo) {
  const testing::TempDir tmp;
  const fs::path dir = onnx_folder(tmp, "bert", "model_opset17.onnx");
  testing::edit_config(dir, "\"BertModel\"", "\"BertForSequenceClassification\"");
  testing::expect_load_error(dir, ErrorKind::Unsupported,
                             "ONNX files of BertForSequenceClassification are not read yet");
}

}  // namespace
}  // namespace warden::model

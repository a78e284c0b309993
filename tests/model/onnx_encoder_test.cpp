// ONNX files of the BERT, XLM-RoBERTa and DistilBERT fixtures, written by Debian's
// torch.onnx.export from modules that follow transformers' modelling code at opsets 14 and 17
// (tools/onnx_fixtures/make_encoder_fixtures.py), load as encoders on Warden's kernels and give
// ONNX Runtime's outputs on the same files (tools/onnx_fixtures/ort_outputs.mjs wrote them,
// with the inputs, to ort_outputs.json): padding, a second segment's token types and RoBERTa's
// padding id inside a text included.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/precision.hpp"
#include "model/encoder_model.hpp"
#include "model/heads/pooling.hpp"
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

// Warden's and ORT's hidden states of the unpadded tokens, row by row.
struct TokenRows {
  std::vector<std::vector<float>> warden, ort;
};

// ORT's inputs as Warden's packed batch: each sequence's unpadded tokens, with the token types
// where the graph takes them (BERT's).
engine::TokenBatch packed_batch(const OrtCase& c, const std::string& family) {
  engine::TokenBatch batch;
  for (std::size_t s = 0; s < c.ids.size(); ++s) {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint32_t> types;
    for (std::size_t t = 0; t < c.ids[s].size() && c.mask[s][t] != 0; ++t) {
      ids.push_back(static_cast<std::uint32_t>(c.ids[s][t]));
      types.push_back(family.starts_with("bert") ? static_cast<std::uint32_t>(c.types[s][t]) : 0U);
    }
    batch.add(ids, types);
  }
  return batch;
}

TokenRows token_rows(const std::string& family, const std::string& file,
                     Precision precision = Precision::Float32) {
  const testing::TempDir tmp;
  const auto model = load_encoder_model(onnx_folder(tmp, family, file), nullptr, active_isa(), precision);
  const OrtCase c = ort_case(family, file);
  const engine::TokenBatch batch = packed_batch(c, family);
  model->encoder.validate(batch);
  engine::EncoderWorkspace ws;
  const std::span<const float> hidden = model->encoder.forward(batch, ws, nullptr);
  const std::size_t h = model->encoder.dims().hidden;
  const std::size_t length = c.ids.front().size();
  EXPECT_EQ(c.hidden.size(), c.ids.size() * length * h);
  TokenRows rows;
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    for (std::size_t t = 0; t < batch.length(s); ++t) {
      const float* ours = hidden.data() + (batch.offsets[s] + t) * h;
      const float* theirs = c.hidden.data() + (s * length + t) * h;
      rows.warden.emplace_back(ours, ours + h);
      rows.ort.emplace_back(theirs, theirs + h);
    }
  }
  return rows;
}

// The largest |Warden - ORT| over the unpadded tokens.
float max_diff_to_ort(const std::string& family, const std::string& file) {
  const TokenRows rows = token_rows(family, file);
  float worst = 0.0F;
  for (std::size_t i = 0; i < rows.warden.size(); ++i) {
    for (std::size_t j = 0; j < rows.warden[i].size(); ++j) {
      worst = std::max(worst, std::abs(rows.warden[i][j] - rows.ort[i][j]));
    }
  }
  return worst;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0;
  double aa = 0;
  double bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * static_cast<double>(b[i]);
    aa += static_cast<double>(a[i]) * static_cast<double>(a[i]);
    bb += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return ab / std::sqrt(aa * bb);
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
                                           std::pair{"distilbert", "model_ort_all.onnx"},
                                           // ORT's transformer optimizer's fused ops
                                           // (tools/onnx_fixtures/make_fused_fixtures.py)
                                           std::pair{"bert-fused", "model_optimized.onnx"}));

// The *ForSequenceClassification exports (a logits output: BertPooler's tanh(dense) of [CLS] and
// the classifier, RoBERTa's head on <s>, DistilBERT's pre_classifier + ReLU) load as classifiers
// whose heads give ORT's logits.
class OnnxClassifierVsOrt : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxClassifierVsOrt, GivesOnnxRuntimesLogits) {
  const std::string family = GetParam();
  const testing::TempDir tmp;
  const auto model = load_encoder_model(onnx_folder(tmp, family, "model_opset14.onnx"));
  ASSERT_TRUE(model->head.has_value());
  EXPECT_EQ(model->kind(), ModelKind::Classifier);
  const OrtCase c = ort_case(family, "model_opset14.onnx");
  const engine::TokenBatch batch = packed_batch(c, family);
  model->encoder.validate(batch);
  engine::EncoderWorkspace ws;
  const std::span<const float> hidden = model->encoder.forward(batch, ws, nullptr);
  std::vector<float> logits(batch.sequences() * model->head->labels());
  model->head->logits(hidden, model->encoder.dims().hidden, batch.offsets, logits);
  ASSERT_EQ(logits.size(), c.hidden.size());
  float worst = 0.0F;
  for (std::size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::abs(logits[i] - c.hidden[i]));
  std::printf("%s: max |Warden - ORT| logits = %.3g\n", family.c_str(), static_cast<double>(worst));
  EXPECT_LE(worst, 1e-4F);
}

INSTANTIATE_TEST_SUITE_P(Families, OnnxClassifierVsOrt,
                         ::testing::Values("bert-classifier", "xlm-roberta-classifier",
                                           "distilbert-classifier"));

// A SentenceTransformer's export with its pooling and normalisation in the graph (optimum's
// token_embeddings and sentence_embedding): the model pools as the graph does — mean for the BERT
// one, CLS for the XLM-R one, whatever the folder says — and its normalised pooled vectors are
// ORT's sentence_embedding.
class OnnxPooledOutputVsOrt : public ::testing::TestWithParam<std::pair<const char*, metadata::PoolingMode>> {
};

// The folder's sentence-transformers files, saying mean pooling or CLS.
void write_pooling_files(const fs::path& dir, bool mean) {
  fs::create_directories(dir / "1_Pooling");
  write_file_atomic(
      dir / "modules.json",
      R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  write_file_atomic(dir / "1_Pooling" / "config.json",
                    fmt::format(R"({{"word_embedding_dimension": 64, "pooling_mode_cls_token": {},
                                    "pooling_mode_mean_tokens": {}}})",
                                !mean, mean));
}

// ORT's sentence_embedding output of `file`.
std::vector<float> ort_sentence_embedding(const std::string& family, const std::string& file) {
  simdjson::dom::parser parser;
  const std::string text = read_file(kData / family / "ort_outputs.json");
  const simdjson::dom::element root = parser.parse(text);
  std::vector<float> want;
  for (const simdjson::dom::element v :
       root["outputs"][file]["others"]["sentence_embedding"]["data"].get_array()) {
    want.push_back(static_cast<float>(double(v)));
  }
  return want;
}

// Warden's hidden states `rows` pooled and normalised as `model` says, one vector per sequence.
std::vector<float> pooled_sentences(const EncoderModel& model, const std::string& family,
                                    const std::string& file, const TokenRows& rows) {
  const OrtCase c = ort_case(family, file);
  std::vector<float> hidden;
  std::vector<std::size_t> offsets{0};
  std::size_t row = 0;
  for (std::size_t s = 0; s < c.mask.size(); ++s) {
    for (std::size_t t = 0; t < c.mask[s].size() && c.mask[s][t] != 0; ++t) {
      hidden.insert(hidden.end(), rows.warden[row].begin(), rows.warden[row].end());
      ++row;
    }
    offsets.push_back(row);
  }
  const std::size_t h = model.encoder.dims().hidden;
  std::vector<float> pooled((offsets.size() - 1) * h);
  heads::pool(hidden, h, offsets, model.pooling.mode, pooled);
  l2_normalize(pooled, h);
  return pooled;
}

TEST_P(OnnxPooledOutputVsOrt, PoolsAsTheGraphAndGivesOrtsSentenceEmbedding) {
  const auto [family, mode] = GetParam();
  const testing::TempDir tmp;
  const fs::path dir = onnx_folder(tmp, family, "model_opset14.onnx");
  write_pooling_files(dir, mode != metadata::PoolingMode::Mean);  // the other pooling: the graph's wins
  const auto model = load_encoder_model(dir);
  EXPECT_EQ(model->pooling.mode, mode);
  const TokenRows rows = token_rows(family, "model_opset14.onnx");
  float worst = 0.0F;
  for (std::size_t i = 0; i < rows.warden.size(); ++i) {
    for (std::size_t j = 0; j < rows.warden[i].size(); ++j) {
      worst = std::max(worst, std::abs(rows.warden[i][j] - rows.ort[i][j]));
    }
  }
  EXPECT_LE(worst, 1e-4F);  // token_embeddings
  const std::vector<float> want = ort_sentence_embedding(family, "model_opset14.onnx");
  const std::vector<float> pooled = pooled_sentences(*model, family, "model_opset14.onnx", rows);
  ASSERT_EQ(pooled.size(), want.size());
  float pooled_worst = 0.0F;
  for (std::size_t i = 0; i < pooled.size(); ++i)
    pooled_worst = std::max(pooled_worst, std::abs(pooled[i] - want[i]));
  std::printf("%s: max |Warden - ORT| sentence_embedding = %.3g\n", family,
              static_cast<double>(pooled_worst));
  EXPECT_LE(pooled_worst, 1e-5F);
}

INSTANTIATE_TEST_SUITE_P(Families, OnnxPooledOutputVsOrt,
                         ::testing::Values(std::pair{"bert-st", metadata::PoolingMode::Mean},
                                           std::pair{"xlm-roberta-st", metadata::PoolingMode::Cls}));

// The dynamic-int8 files (quantize_dynamic's graph, and ORT's optimisation of it with
// DynamicQuantizeMatMul / MatMulIntegerToFloat), run with the file's int8 weights and scales on
// Warden's int8 kernels, or dequantised to float32; and the same with asymmetric uint8 weights
// (model_uint8*.onnx), dequantised exactly and requantised by Warden under int8. ORT quantises each
// activation tensor as a whole at run time (uint8, one scale for the batch), Warden row by row, so the two
// differ by quantisation noise, which on these 64-wide fixtures is larger than on real models: ORT's own int8
// output is within cosine 0.9966 of its float32 output here (0.99996 at bge-small's size,
// docs/benchmarks.md). So each token's vector must be at least as close to ORT's int8 output as
// ORT's own float32 output is (less 0.001), and never below 0.995; and the nearest of ORT's
// token vectors to each of Warden's is the same token (the ranking a retrieval over them would
// give).
class OnnxInt8VsOrt : public ::testing::TestWithParam<std::tuple<const char*, const char*, Precision>> {};

TEST_P(OnnxInt8VsOrt, StaysWithinCosine0999AndRanksAsOrt) {
  const auto [family, file, precision] = GetParam();
  const TokenRows rows = token_rows(family, file, precision);
  const TokenRows fp32 = token_rows(family, "model_opset14.onnx");  // .ort: ORT's float32 output
  double worst = 1.0;
  double ort_own = 1.0;  // ORT's float32 output against its int8 output
  for (std::size_t i = 0; i < rows.warden.size(); ++i) {
    worst = std::min(worst, cosine(rows.warden[i], rows.ort[i]));
    ort_own = std::min(ort_own, cosine(fp32.ort[i], rows.ort[i]));
    std::size_t nearest = 0;
    for (std::size_t j = 1; j < rows.ort.size(); ++j) {
      if (cosine(rows.warden[i], rows.ort[j]) > cosine(rows.warden[i], rows.ort[nearest])) nearest = j;
    }
    EXPECT_EQ(nearest, i) << "token " << i;
  }
  std::printf("%s/%s (%s): min cosine to ORT = %.6f (ORT's float32 to its int8: %.6f)\n", family, file,
              std::string(precision_name(precision)).c_str(), worst, ort_own);
  EXPECT_GE(worst, std::min(ort_own - 0.001, 0.999));
  EXPECT_GE(worst, 0.995);
}

INSTANTIATE_TEST_SUITE_P(Families, OnnxInt8VsOrt,
                         ::testing::Combine(::testing::Values("bert", "xlm-roberta", "distilbert"),
                                            ::testing::Values("model_int8.onnx", "model_int8_ort_all.onnx",
                                                              "model_uint8.onnx", "model_uint8_ort_all.onnx"),
                                            ::testing::Values(Precision::Int8, Precision::Float32)));

// The float16 files (transformers.js's model_fp16.onnx: fp16 initialisers and constants, Casts
// around the mask and the output). Warden widens the fp16 weights exactly and computes in float32;
// ORT rounds every intermediate to fp16, so the two differ by fp16 rounding noise (ORT's own fp16
// output is within ~4e-3 of its float32 output on these fixtures): each token's vector must be
// within cosine 0.999 of ORT's on the same file, nearest to its own token, and within ORT's own
// fp16 error of ORT's float32 output.
class OnnxFp16VsOrt : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxFp16VsOrt, StaysWithinCosine0999AndRanksAsOrt) {
  const char* family = GetParam();
  const TokenRows rows = token_rows(family, "model_fp16.onnx");
  const TokenRows fp32 = token_rows(family, "model_opset14.onnx");
  double worst = 1.0;
  float to_fp32 = 0.0F;      // Warden on the fp16 file against ORT's float32 output
  float ort_to_fp32 = 0.0F;  // ORT on the fp16 file against its float32 output
  for (std::size_t i = 0; i < rows.warden.size(); ++i) {
    worst = std::min(worst, cosine(rows.warden[i], rows.ort[i]));
    for (std::size_t j = 0; j < rows.warden[i].size(); ++j) {
      to_fp32 = std::max(to_fp32, std::abs(rows.warden[i][j] - fp32.ort[i][j]));
      ort_to_fp32 = std::max(ort_to_fp32, std::abs(rows.ort[i][j] - fp32.ort[i][j]));
    }
    std::size_t nearest = 0;
    for (std::size_t j = 1; j < rows.ort.size(); ++j) {
      if (cosine(rows.warden[i], rows.ort[j]) > cosine(rows.warden[i], rows.ort[nearest])) nearest = j;
    }
    EXPECT_EQ(nearest, i) << "token " << i;
  }
  std::printf(
      "%s/model_fp16.onnx: 1 - min cosine to ORT = %.2e; max |diff| to ORT's float32 output %.2e (ORT's own: "
      "%.2e)\n",
      family, 1.0 - worst, static_cast<double>(to_fp32), static_cast<double>(ort_to_fp32));
  EXPECT_GE(worst, 0.999);
  EXPECT_LE(to_fp32, ort_to_fp32);
}

INSTANTIATE_TEST_SUITE_P(Families, OnnxFp16VsOrt, ::testing::Values("bert", "xlm-roberta", "distilbert"));

// A float16 SentenceTransformer export (its Clip's 1e-9 is float16's 1e-7): the graph's mean pooling over
// the folder's CLS, and sentence vectors within cosine 0.999 of ORT's on the same file.
TEST(OnnxFp16PooledVsOrt, PoolsAsTheGraphWithinCosine0999) {
  const testing::TempDir tmp;
  const fs::path dir = onnx_folder(tmp, "bert-st", "model_fp16.onnx");
  write_pooling_files(dir, false);
  const auto model = load_encoder_model(dir);
  EXPECT_EQ(model->pooling.mode, metadata::PoolingMode::Mean);
  const std::vector<float> want = ort_sentence_embedding("bert-st", "model_fp16.onnx");
  const std::vector<float> pooled =
      pooled_sentences(*model, "bert-st", "model_fp16.onnx", token_rows("bert-st", "model_fp16.onnx"));
  ASSERT_EQ(pooled.size(), want.size());
  const std::size_t h = model->encoder.dims().hidden;
  for (std::size_t s = 0; s < pooled.size() / h; ++s) {
    const std::vector<float> ours(pooled.begin() + static_cast<std::ptrdiff_t>(s * h),
                                  pooled.begin() + static_cast<std::ptrdiff_t>((s + 1) * h));
    const std::vector<float> theirs(want.begin() + static_cast<std::ptrdiff_t>(s * h),
                                    want.begin() + static_cast<std::ptrdiff_t>((s + 1) * h));
    EXPECT_GE(cosine(ours, theirs), 0.999) << "sequence " << s;
  }
}

// A graph with a node no pass places is a load error naming that node and how far the encoder
// was read — not a slower interpreter, not a wrong answer.
TEST(OnnxEncoderErrors, ANodeNoPassPlacesIsNamedWithWhereReadingStopped) {
  model::onnx::ModelFile file(kData / "bert" / "model_opset14.onnx");
  model::onnx::Model model = file.model();
  bool changed = false;
  for (model::onnx::Node& n : model.graph.nodes) {
    if (!changed && n.op_type == "Erf" && n.name.find("layer.1") != std::string::npos) {
      n.op_type = "Sinh";  // the second layer's GELU is no longer one
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  try {
    (void)model::onnx::read_encoder_graph(model, "edited.onnx");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("edited.onnx"), std::string::npos) << what;
    EXPECT_NE(what.find("(Div in ai.onnx)"), std::string::npos) << what;  // the first node left of the GELU
    EXPECT_NE(what.find("the embeddings and 1 layer(s)"), std::string::npos) << what;
  }
}

// A node with fewer inputs than its operator takes (found by warden-fuzz-onnx_graph: a
// Transpose without one) is a corrupt file, named, before any pass indexes its inputs.
TEST(OnnxEncoderErrors, ANodeMissingTheInputsItsOperatorTakesIsCorrupt) {
  model::onnx::ModelFile file(kData / "bert" / "model_opset14.onnx");
  model::onnx::Model model = file.model();
  const auto transpose = std::find_if(model.graph.nodes.begin(), model.graph.nodes.end(),
                                      [](const model::onnx::Node& n) { return n.op_type == "Transpose"; });
  ASSERT_NE(transpose, model.graph.nodes.end());
  transpose->inputs.clear();
  try {
    (void)model::onnx::read_encoder_graph(model, "edited.onnx");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find("(Transpose) has 0 input(s); the operator takes at least 1"),
              std::string::npos)
        << e.what();
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
  testing::edit_config(dir, "\"BertModel\"", "\"JinaBertModel\"");
  testing::expect_load_error(dir, ErrorKind::Unsupported, "ONNX files of JinaBertModel are not read yet");
}

// A classifier's config beside an embedder's graph, and the other way round.
TEST(OnnxEncoderErrors, AHeadTheConfigAndTheGraphDisagreeOnIsNamed) {
  {
    const testing::TempDir tmp;
    const fs::path dir = onnx_folder(tmp, "bert", "model_opset17.onnx");
    testing::edit_config(dir, "\"BertModel\"", "\"BertForSequenceClassification\"");
    testing::expect_load_error(dir, ErrorKind::CorruptFile, "the graph has no classification head");
  }
  {
    const testing::TempDir tmp;
    const fs::path dir = onnx_folder(tmp, "bert-classifier", "model_opset14.onnx");
    testing::edit_config(dir, "\"BertForSequenceClassification\"", "\"BertModel\"");
    testing::expect_load_error(dir, ErrorKind::CorruptFile,
                               "the graph ends in a classification head ('logits')");
  }
}

}  // namespace
}  // namespace warden::model

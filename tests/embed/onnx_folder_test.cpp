// A folder holding an ONNX graph instead of safetensors embeds through the same tokenizer,
// encoder kernels and pooling: the committed export of the BERT fixture (its vocabulary cut to
// 512 rows, tests/data/onnx/bert) beside the fixture's tokenizer and sentence-transformers
// files gives the embeddings of the safetensors fixture it was exported from. The texts are
// made of characters the vocabulary lacks, so every id is one the cut table holds ([CLS],
// [UNK], [SEP]); the arithmetic itself is checked against ONNX Runtime in
// tests/model/onnx_encoder_test.cpp.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "embed/model_folder.hpp"
#include "embed/neural_embedder.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

TEST(OnnxFolder, EmbedsAsTheSafetensorsFolderItWasExportedFrom) {
  const fs::path root = fs::temp_directory_path() / ("warden-onnx-folder-" + std::to_string(::getpid()));
  const fs::path st = root / "safetensors";
  const fs::path onnx = root / "onnx";
  testing::run_fixture_command("warden-fixture --arch bert --head none --preset tiny --seed 1 --out DIR", st);
  fs::create_directories(onnx / "onnx");
  for (const auto& e : fs::directory_iterator(st)) {
    if (e.path().filename() != "model.safetensors" && e.path().filename() != "config.json") {
      fs::copy(e.path(), onnx / e.path().filename(), fs::copy_options::recursive);
    }
  }
  const fs::path data = fs::path(WARDEN_TEST_DATA) / "onnx" / "bert";
  fs::copy_file(data / "config.json", onnx / "config.json");
  fs::copy_file(data / "model_opset14.onnx", onnx / "onnx" / "model.onnx");  // transformers.js's layout

  const embed::ModelFolder folder = embed::inspect_model_folder(onnx);
  ASSERT_TRUE(folder.weights.has_value());
  EXPECT_EQ(folder.weights->filename(), "model.onnx");

  ThreadPool pool(2);
  const embed::NeuralEmbedder from_st(st, &pool);
  const embed::NeuralEmbedder from_onnx(onnx, &pool);
  const std::vector<std::string_view> texts{"☃", "☃ ☄ ☃", "☃☃ ☄☄☄ ☃ ☄ ☃☃☃☃"};
  const Embeddings a = from_st.embed(texts);
  const Embeddings b = from_onnx.embed(texts);
  ASSERT_EQ(a.rows(), texts.size());
  ASSERT_EQ(b.rows(), texts.size());
  ASSERT_EQ(a.dim(), b.dim());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    for (std::size_t d = 0; d < a.dim(); ++d)
      EXPECT_NEAR(a.row(i)[d], b.row(i)[d], 1e-5) << texts[i] << " " << d;
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace warden

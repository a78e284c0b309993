// An embedding folder's sentence-transformers Dense modules after its Pooling (EmbeddingGemma's
// 2_Dense and 3_Dense), end to end through the embedder: text in, the golden's
// sentence_embedding (tests/data/goldens/gemma3-none.json, from the PyTorch reference) out; the
// activation a module names applied; and the folders Warden cannot run as sentence-transformers
// would refused by name rather than run without a module.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/l2_normalize.hpp"
#include "embed/neural_embedder.hpp"
#include "support/golden_model.hpp"

namespace warden {
namespace {

constexpr double kTolerance = 1e-4;

class DenseModules : public ::testing::Test {
 protected:
  // The embedder's normalised vector of every golden case, and the golden's sentence_embedding
  // passed through `f` and normalised.
  template <typename F>
  void expect_golden(const embed::NeuralEmbedder& embedder, F f) const {
    for (const auto c : model_.golden()["cases"].get_array()) {
      const std::string_view input = c["input"];
      if (input.size() > 2000) continue;  // the long cases are the golden test's
      const std::string_view texts[] = {input};
      const Embeddings got = embedder.embed(texts);
      std::vector<float> want = testing::golden_floats(c["sentence_embedding"]);
      for (float& v : want) v = f(v);
      l2_normalize(want, want.size());
      ASSERT_EQ(got.dim(), want.size());
      for (std::size_t j = 0; j < want.size(); ++j) {
        ASSERT_NEAR(got.values()[j], want[j], kTolerance) << input << " [" << j << "]";
      }
    }
  }

  void edit(const std::string& file, const std::string& from, const std::string& to) const {
    const auto path = model_.dir() / file;
    std::string text = read_file(path);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    write_file_atomic(path, text);
  }

  void expect_refused(ErrorKind kind, const std::string& names) const {
    try {
      const embed::NeuralEmbedder embedder(model_.dir(), nullptr);
      ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  }

  testing::GoldenModel model_{"gemma3-none"};
};

TEST_F(DenseModules, TheEmbedderGivesTheReferencesSentenceEmbedding) {
  const embed::NeuralEmbedder embedder(model_.dir(), nullptr);
  EXPECT_EQ(embedder.dim(), 64U);  // 3_Dense's out_features
  EXPECT_EQ(embedder.token_dim(), 64U);
  expect_golden(embedder, [](float v) { return v; });
}

TEST_F(DenseModules, TheLastModuleSetsTheVectorsWidthAndTheTokenVectorsKeepTheHiddenOne) {
  // Without 3_Dense the vector is 2_Dense's 256 values; /embed_all's rows stay the encoder's 64.
  edit("modules.json",
       "  {\n    \"idx\": 3,\n    \"name\": \"3\",\n    \"path\": \"3_Dense\",\n    \"type\": "
       "\"sentence_transformers.models.Dense\"\n  },\n",
       "");
  const embed::NeuralEmbedder embedder(model_.dir(), nullptr);
  EXPECT_EQ(embedder.dim(), 256U);
  EXPECT_EQ(embedder.token_dim(), 64U);
  const std::string_view texts[] = {"a short text"};
  EXPECT_EQ(embedder.embed(texts).dim(), 256U);
  const embed::PreparedInput p = embedder.prepare(texts[0], {});
  const embed::PreparedInput* inputs[] = {&p};
  const std::vector<Embeddings> tokens = embedder.embed_tokens(inputs);
  ASSERT_EQ(tokens.size(), 1U);
  EXPECT_EQ(tokens[0].dim(), 64U);
  EXPECT_EQ(tokens[0].rows(), p.ids.size());
}

TEST_F(DenseModules, AModulesActivationIsApplied) {
  edit("3_Dense/config.json", "torch.nn.modules.linear.Identity", "torch.nn.modules.activation.Tanh");
  const embed::NeuralEmbedder embedder(model_.dir(), nullptr);
  expect_golden(embedder, [](float v) { return std::tanh(v); });
}

TEST_F(DenseModules, TheTaskPromptsAreTheFolders) {
  const embed::NeuralEmbedder embedder(model_.dir(), nullptr);
  ASSERT_TRUE(embedder.prompts().contains("query"));
  EXPECT_EQ(embedder.prompts().at("query"), "task: search result | query: ");
  EXPECT_EQ(embedder.prompts().at("document"), "title: none | text: ");
}

TEST_F(DenseModules, AWidthThatDoesNotChainIsNamed) {
  edit("3_Dense/config.json", "\"in_features\": 256", "\"in_features\": 255");
  expect_refused(ErrorKind::CorruptFile, "3_Dense/config.json");
}

TEST_F(DenseModules, AnActivationWardenDoesNotRunIsNamed) {
  edit("2_Dense/config.json", "torch.nn.modules.linear.Identity", "torch.nn.modules.activation.Sigmoid");
  expect_refused(ErrorKind::Unsupported, "Sigmoid");
}

TEST_F(DenseModules, AModuleKindWardenDoesNotRunIsNamed) {
  edit("modules.json", "sentence_transformers.models.Normalize", "sentence_transformers.models.LayerNorm");
  expect_refused(ErrorKind::Unsupported, "sentence_transformers.models.LayerNorm");
}

TEST_F(DenseModules, ADenseModuleBeforeThePoolingIsRefused) {
  edit("modules.json", "\"path\": \"1_Pooling\",\n    \"type\": \"sentence_transformers.models.Pooling\"",
       "\"path\": \"2_Dense\",\n    \"type\": \"sentence_transformers.models.Dense\"");
  expect_refused(ErrorKind::Unsupported, "before the Pooling");
}

}  // namespace
}  // namespace warden

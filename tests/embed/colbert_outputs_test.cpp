// A PyLate ColBERT against the golden of tools/golden/colbert_reference.py (PyLate's
// preprocess, Dense and encode): the same model input ids for a query (marker, [MASK]
// expansion the other tokens do not attend to) and a document (marker, punctuation vectors
// dropped), the same unit vectors within 1e-4 from one batch mixing both; the same weights in
// Stanford ColBERT's layout (HF_ColBERT + artifact.metadata) give the same vectors; and the
// folders Warden cannot run are refused by name.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "model/formats/safetensors.hpp"
#include "support/golden_model.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-4;

std::vector<std::uint32_t> ids_of(simdjson::dom::element array) {
  std::vector<std::uint32_t> v;
  for (const auto x : array.get_array()) v.push_back(static_cast<std::uint32_t>(std::int64_t(x)));
  return v;
}

class ColbertOutputs : public ::testing::Test {
 protected:
  // Every case as a query and as a document, interleaved, in one batch.
  struct Run {
    std::vector<embed::PreparedInput> prepared;
    std::vector<embed::RetrievalVectors> out;
  };
  Run run_all(const embed::NeuralEmbedder& embedder) const {
    Run r;
    for (const auto c : golden_["cases"].get_array()) {
      for (const bool query : {true, false}) {
        embed::InputOptions o;
        o.query = query;
        r.prepared.push_back(embedder.prepare(std::string_view(c["input"]), o));
      }
    }
    std::vector<const embed::PreparedInput*> ptrs;
    for (const auto& p : r.prepared) ptrs.push_back(&p);
    r.out = embedder.embed_retrieval(ptrs);
    return r;
  }

  testing::GoldenModel model_{"bert-colbert"};
  const fs::path& dir_ = model_.dir();
  simdjson::dom::element golden_ = model_.golden();
};

TEST_F(ColbertOutputs, QueriesAndDocumentsMatchPyLateFromOneMixedBatch) {
  ThreadPool pool(2);
  const embed::NeuralEmbedder embedder(dir_, &pool);
  ASSERT_EQ(embedder.retrieval_outputs(), (warden::embed::RetrievalOutputs{false, false, true}));
  ASSERT_EQ(embedder.multi_vector_dim(), 24U);
  EXPECT_EQ(embedder.pooling(), "colbert");  // what /info reports
  const Run r = run_all(embedder);
  double worst = 0;
  std::size_t vectors = 0;
  std::size_t expanded = 0;
  std::size_t i = 0;
  for (const auto c : golden_["cases"].get_array()) {
    for (const char* role : {"query", "document"}) {
      SCOPED_TRACE(std::string(role) + ": " + std::string(std::string_view(c["input"])).substr(0, 40));
      const auto want = c["colbert"][role];
      const embed::PreparedInput& p = r.prepared[i];
      EXPECT_EQ(p.ids, ids_of(want["ids"]));
      // The [MASK] expansion is hidden from attention after the real tokens.
      std::size_t attended = 0;
      for (const auto m : want["attention_mask"].get_array()) attended += std::int64_t(m) == 1 ? 1 : 0;
      EXPECT_EQ(p.visible_tokens, attended == p.ids.size() ? 0 : attended);
      expanded += attended < p.ids.size() ? 1 : 0;
      const Embeddings& got = r.out[i].multi;
      std::size_t rows = 0;
      for (const auto row : want["vectors"].get_array()) {
        const auto v = testing::golden_floats(row);
        ASSERT_LT(rows, got.rows());
        ASSERT_EQ(v.size(), got.dim());
        for (std::size_t d = 0; d < v.size(); ++d) {
          EXPECT_NEAR(got.row(rows)[d], v[d], kTolerance);
          worst = std::max(worst, std::fabs(double(got.row(rows)[d]) - double(v[d])));
        }
        ++rows;
      }
      EXPECT_EQ(got.rows(), rows);
      EXPECT_TRUE(r.out[i].dense.empty());
      vectors += rows;
      ++i;
    }
  }
  std::printf("bert-colbert: max |diff| %.2e over %zu token vectors\n", worst, vectors);
  EXPECT_GT(expanded, 3U);  // short queries were expanded, long ones cut
}

TEST_F(ColbertOutputs, EachInputAloneIsItsBatchedSelf) {
  const embed::NeuralEmbedder embedder(dir_, nullptr);
  const Run r = run_all(embedder);
  for (std::size_t i = 0; i < r.prepared.size(); ++i) {
    const embed::PreparedInput* one = &r.prepared[i];
    const auto alone = embedder.embed_retrieval({&one, 1});
    ASSERT_EQ(alone[0].multi.values().size(), r.out[i].multi.values().size());
    for (std::size_t k = 0; k < alone[0].multi.values().size(); ++k)
      EXPECT_NEAR(alone[0].multi.values()[k], r.out[i].multi.values()[k], 1e-5);
  }
}

TEST_F(ColbertOutputs, StanfordLayoutOfTheSameWeightsGivesTheSameVectors) {
  const embed::NeuralEmbedder pylate(dir_, nullptr);
  const Run want = run_all(pylate);

  // colbert-ir/colbertv2.0's layout: HF_ColBERT's state dict (bert.* and linear.weight) and
  // artifact.metadata, no sentence-transformers files.
  const fs::path stanford = dir_.string() + "-stanford";
  fs::create_directories(stanford);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"})
    fs::copy_file(dir_ / f, stanford / f);
  std::string config = read_file(dir_ / "config.json");
  const auto at = config.find("\"BertModel\"");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 11, "\"HF_ColBERT\"");
  write_file_atomic(stanford / "config.json", config);
  {
    const model::formats::SafetensorsFile encoder(dir_ / "model.safetensors");
    const model::formats::SafetensorsFile dense(dir_ / "1_Dense" / "model.safetensors");
    std::vector<model::formats::TensorToWrite> tensors;
    for (const model::formats::Tensor& t : encoder.tensors())
      tensors.push_back({"bert." + t.name, t.dtype, t.shape, t.data});
    const model::formats::Tensor& linear = *dense.find("linear.weight");
    tensors.push_back({"linear.weight", linear.dtype, linear.shape, linear.data});
    model::formats::write_safetensors(stanford / "model.safetensors", tensors, {{"format", "pt"}});
  }
  write_file_atomic(stanford / "artifact.metadata",
                    R"({"query_token_id": "[unused0]", "doc_token_id": "[unused1]", "query_maxlen": 32,)"
                    R"( "doc_maxlen": 180, "attend_to_mask_tokens": false, "dim": 24})");
  const embed::NeuralEmbedder embedder(stanford, nullptr);
  const Run got = run_all(embedder);
  fs::remove_all(stanford);
  ASSERT_EQ(got.out.size(), want.out.size());
  for (std::size_t i = 0; i < got.out.size(); ++i) {
    EXPECT_EQ(got.prepared[i].ids, want.prepared[i].ids);
    ASSERT_EQ(got.out[i].multi.values().size(), want.out[i].multi.values().size());
    EXPECT_TRUE(std::equal(got.out[i].multi.values().begin(), got.out[i].multi.values().end(),
                           want.out[i].multi.values().begin()));
  }
}

TEST_F(ColbertOutputs, ThereIsNoDenseVectorAndALongInputIsAClearErrorWithoutTruncation) {
  const embed::NeuralEmbedder embedder(dir_, nullptr);
  const embed::PreparedInput p = embedder.prepare("hello", {});
  const embed::PreparedInput* one = &p;
  std::vector<float> out(embedder.dim());
  try {
    embedder.embed_prepared({&one, 1}, out);
    FAIL() << "a ColBERT gave a dense vector";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("ColBERT"), std::string::npos) << e.what();
  }
  embed::InputOptions o;
  o.query = true;
  o.truncate = false;
  std::string words;
  for (int i = 0; i < 40; ++i) words += "word ";
  try {
    (void)embedder.prepare(words, o);
    FAIL() << "a 40-word query passed a 32-token limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("query"), std::string::npos) << e.what();
  }
}

TEST_F(ColbertOutputs, ADenseModuleWardenCannotRunIsRefusedByName) {
  const std::string config = read_file(dir_ / "1_Dense" / "config.json");
  std::string tanh = config;
  const std::string identity = "torch.nn.modules.linear.Identity";
  tanh.replace(tanh.find(identity), identity.size(), "torch.nn.modules.activation.Tanh");
  write_file_atomic(dir_ / "1_Dense" / "config.json", tanh);
  try {
    const embed::NeuralEmbedder embedder(dir_, nullptr);
    FAIL() << "a Tanh projection loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("Tanh"), std::string::npos) << e.what();
  }
  std::string wide = config;
  wide.replace(wide.find("\"in_features\": 64"), 17, "\"in_features\": 65");
  write_file_atomic(dir_ / "1_Dense" / "config.json", wide);
  try {
    const embed::NeuralEmbedder embedder(dir_, nullptr);
    FAIL() << "a projection of the wrong width loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find("in_features"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warden

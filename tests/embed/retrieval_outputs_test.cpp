// bge-m3's three outputs against the golden of tools/golden/m3_reference.py (FlagEmbedding's
// M3 code): the dense vector, the sparse token weights (same ids, weights within 1e-4) and the
// ColBERT vectors (1e-4), all from one pass over a mixed batch; and what a model without the
// heads, or with broken heads, says.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "support/golden_model.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-4;

using testing::golden_floats;

class M3Outputs : public ::testing::Test {
 protected:
  testing::GoldenModel model_{"xlm-roberta-m3"};
  const fs::path& dir_ = model_.dir();
  simdjson::dom::element golden_ = model_.golden();
};

TEST_F(M3Outputs, Bge3OutputsMatchFlagEmbeddingFromOneMixedBatch) {
  ThreadPool pool(2);
  const embed::NeuralEmbedder embedder(dir_, &pool);
  ASSERT_EQ(embedder.retrieval_outputs(), (warden::embed::RetrievalOutputs{true, true, true}));
  ASSERT_EQ(embedder.multi_vector_dim(), embedder.dim());

  std::vector<embed::PreparedInput> prepared;
  std::vector<simdjson::dom::element> cases;
  for (const auto c : golden_["cases"].get_array()) {
    prepared.push_back(embedder.prepare(std::string_view(c["input"]), {}));
    cases.push_back(c);
  }
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : prepared) ptrs.push_back(&p);
  const std::vector<embed::RetrievalVectors> got = embedder.embed_retrieval(ptrs);
  ASSERT_EQ(got.size(), cases.size());

  std::size_t sparse_entries = 0;
  double worst[3] = {0, 0, 0};  // dense, sparse, multi
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(std::string(std::string_view(cases[i]["input"])).substr(0, 40));
    const auto m3 = cases[i]["m3"];
    // Dense: the pooled CLS vector, normalised as FlagEmbedding does.
    std::vector<float> dense = got[i].dense;
    embedder.normalize_rows(dense);
    const std::vector<float> want_dense = golden_floats(m3["dense"]);
    ASSERT_EQ(dense.size(), want_dense.size());
    for (std::size_t d = 0; d < dense.size(); ++d) {
      EXPECT_NEAR(dense[d], want_dense[d], kTolerance);
      worst[0] = std::max(worst[0], std::fabs(double(dense[d]) - double(want_dense[d])));
    }

    // Sparse: exactly the same ids, weights within the bar.
    std::vector<std::uint32_t> want_ids;
    for (const auto x : m3["sparse"]["indices"].get_array())
      want_ids.push_back(std::uint32_t(std::int64_t(x)));
    const std::vector<float> want_values = golden_floats(m3["sparse"]["values"]);
    EXPECT_EQ(got[i].sparse.indices, want_ids);
    ASSERT_EQ(got[i].sparse.values.size(), want_values.size());
    for (std::size_t k = 0; k < want_values.size(); ++k) {
      EXPECT_NEAR(got[i].sparse.values[k], want_values[k], kTolerance);
      worst[1] = std::max(worst[1], std::fabs(double(got[i].sparse.values[k]) - double(want_values[k])));
    }
    sparse_entries += want_ids.size();

    // ColBERT: one unit vector per token but CLS.
    const Embeddings& multi = got[i].multi;
    std::vector<float> want_multi;
    std::size_t want_rows = 0;
    for (const auto row : m3["colbert"].get_array()) {
      const auto r = golden_floats(row);
      want_multi.insert(want_multi.end(), r.begin(), r.end());
      ++want_rows;
    }
    ASSERT_EQ(multi.rows(), want_rows);
    ASSERT_EQ(multi.rows(), prepared[i].ids.size() - 1);
    for (std::size_t k = 0; k < want_multi.size(); ++k) {
      EXPECT_NEAR(multi.values()[k], want_multi[k], kTolerance);
      worst[2] = std::max(worst[2], std::fabs(double(multi.values()[k]) - double(want_multi[k])));
    }
  }
  std::printf("xlm-roberta-m3: max |diff| dense %.2e, sparse %.2e (%zu entries), multi %.2e\n", worst[0],
              worst[1], sparse_entries, worst[2]);
  // The fixture's heads keep some tokens and drop others (ReLU), so the test sees both.
  EXPECT_GT(sparse_entries, 10U);
}

TEST_F(M3Outputs, EachInputAloneIsItsBatchedSelf) {
  ThreadPool pool(2);
  const embed::NeuralEmbedder embedder(dir_, &pool);
  std::vector<embed::PreparedInput> prepared;
  for (const auto c : golden_["cases"].get_array())
    prepared.push_back(embedder.prepare(std::string_view(c["input"]), {}));
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : prepared) ptrs.push_back(&p);
  const auto batched = embedder.embed_retrieval(ptrs);
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    const embed::PreparedInput* one = &prepared[i];
    const auto alone = embedder.embed_retrieval({&one, 1});
    EXPECT_EQ(alone[0].sparse.indices, batched[i].sparse.indices);
    ASSERT_EQ(alone[0].sparse.values.size(), batched[i].sparse.values.size());
    for (std::size_t k = 0; k < alone[0].sparse.values.size(); ++k)
      EXPECT_NEAR(alone[0].sparse.values[k], batched[i].sparse.values[k], 1e-5);
    ASSERT_EQ(alone[0].multi.values().size(), batched[i].multi.values().size());
    for (std::size_t k = 0; k < alone[0].multi.values().size(); ++k)
      EXPECT_NEAR(alone[0].multi.values()[k], batched[i].multi.values()[k], 1e-5);
  }
}

TEST_F(M3Outputs, AModelWithoutHeadsGivesItsDenseVectorAlone) {
  fs::remove(dir_ / "sparse_linear.pt");
  fs::remove(dir_ / "colbert_linear.pt");
  const embed::NeuralEmbedder embedder(dir_, nullptr);
  EXPECT_EQ(embedder.retrieval_outputs(), (warden::embed::RetrievalOutputs{true, false, false}));
  EXPECT_EQ(embedder.multi_vector_dim(), 0U);
  const embed::PreparedInput p = embedder.prepare("hello", {});
  const embed::PreparedInput* one = &p;
  const auto out = embedder.embed_retrieval({&one, 1});
  EXPECT_EQ(out[0].dense.size(), embedder.dim());
  EXPECT_EQ(out[0].sparse.size(), 0U);
  EXPECT_EQ(out[0].multi.rows(), 0U);
}

TEST_F(M3Outputs, AHeadOfTheWrongShapeOrNotACheckpointIsRefusedByName) {
  // A Linear(hidden, hidden) where the lexical head's Linear(hidden, 1) belongs.
  fs::copy_file(dir_ / "colbert_linear.pt", dir_ / "sparse_linear.pt", fs::copy_options::overwrite_existing);
  try {
    const embed::NeuralEmbedder embedder(dir_, nullptr);
    FAIL() << "a Linear(hidden, hidden) as sparse_linear.pt loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find("sparse_linear.pt"), std::string::npos) << e.what();
  }

  write_file_atomic(dir_ / "sparse_linear.pt", "not a zip archive");
  try {
    const embed::NeuralEmbedder embedder(dir_, nullptr);
    FAIL() << "a broken sparse_linear.pt loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sparse_linear.pt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

// SPLADE: the sparse vector of tools/golden/splade_reference.py (the MLM head of
// BertForMaskedLM, XLMRobertaForMaskedLM or DistilBertForMaskedLM, sentence-transformers'
// SpladePooling) from one mixed batch. Ids whose weight passes 1e-4 are the same on both sides;
// every weight is within 1e-4 (an absent id weighs 0), so an id whose logit sits at zero within
// rounding may be kept by one side only with a weight below the bar.
class SpladeOutputs : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(MaskedLmHeads, SpladeOutputs,
                         ::testing::Values("bert-splade", "xlm-roberta-splade", "distilbert-splade"));

TEST_P(SpladeOutputs, SparseVectorsMatchTheReferenceAndThereIsNoDenseOne) {
  namespace fs = std::filesystem;
  const std::string name = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("warden-" + name + "-" + std::to_string(::getpid()));
  const std::string text = read_file(fs::path(WARDEN_TEST_DATA) / "goldens" / (name + ".json"));
  simdjson::dom::parser parser;
  const simdjson::dom::element golden = parser.parse(text);
  testing::run_fixture_command(std::string_view(golden["fixture"]["command"]), dir);
  ThreadPool pool(2);
  const embed::NeuralEmbedder embedder(dir, &pool);
  EXPECT_EQ(embedder.retrieval_outputs(), (warden::embed::RetrievalOutputs{false, true, false}));

  std::vector<embed::PreparedInput> prepared;
  std::vector<simdjson::dom::element> cases;
  for (const auto c : golden["cases"].get_array()) {
    prepared.push_back(embedder.prepare(std::string_view(c["input"]), {}));
    cases.push_back(c);
  }
  std::vector<const embed::PreparedInput*> ptrs;
  for (const auto& p : prepared) ptrs.push_back(&p);
  const auto got = embedder.embed_retrieval(ptrs);
  ASSERT_EQ(got.size(), cases.size());
  std::size_t compared = 0;
  double worst = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::map<std::uint32_t, double> want;
    std::vector<double> values;
    for (const auto x : cases[i]["splade"]["values"].get_array()) values.push_back(double(x));
    std::size_t k = 0;
    for (const auto x : cases[i]["splade"]["indices"].get_array())
      want[std::uint32_t(std::int64_t(x))] = values[k++];
    std::map<std::uint32_t, double> have;
    for (std::size_t j = 0; j < got[i].sparse.size(); ++j)
      have[got[i].sparse.indices[j]] = got[i].sparse.values[j];
    EXPECT_TRUE(got[i].dense.empty());
    for (const auto& [id, w] : want) {
      const double h = have.contains(id) ? have[id] : 0.0;
      EXPECT_NEAR(h, w, 1e-4) << "input " << i << " id " << id;
      worst = std::max(worst, std::fabs(h - w));
      if (w > 1e-4) {
        EXPECT_TRUE(have.contains(id)) << "input " << i << " id " << id;
      }
      ++compared;
    }
    for (const auto& [id, h] : have) {
      if (!want.contains(id)) {
        EXPECT_LT(h, 1e-4) << "input " << i << " id " << id << " is not the reference's";
      }
    }
  }
  EXPECT_GT(compared, 50U);
  std::printf("%s: max |diff| %.2e over %zu reference weights\n", name.c_str(), worst, compared);
  // The dense path says what the model is rather than answer something else.
  std::vector<float> out(embedder.dim());
  try {
    embedder.embed_prepared({ptrs.data(), 1}, out);
    FAIL() << "a SPLADE model gave a dense vector";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden

namespace warden {
namespace {

// TEI's --pooling splade: a *ForMaskedLM repo without sentence-transformers' SpladePooling
// module (naver/splade-cocondenser-ensembledistil's layout) becomes the same SPLADE model; the
// other names replace the pooling mode; a model without an MLM head is refused by name.
TEST(PoolingOverride, SpladeWithoutModulesJsonIsTheSameModel) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("warden-pooling-override-" + std::to_string(::getpid()));
  testing::run_fixture_command(
      "warden-fixture --arch bert --head none --preset tiny --seed 1 --splade --out DIR", dir);
  const std::vector<std::string> texts = {"the quick brown fox", "a"};
  auto sparse_of = [&](const embed::NeuralEmbedder& e) {
    std::vector<embed::PreparedInput> prepared;
    for (const auto& t : texts) prepared.push_back(e.prepare(t, {}));
    std::vector<const embed::PreparedInput*> ptrs;
    for (const auto& p : prepared) ptrs.push_back(&p);
    std::vector<SparseVector> out;
    for (auto& v : e.embed_retrieval(ptrs)) out.push_back(std::move(v.sparse));
    return out;
  };
  const auto want = sparse_of(embed::NeuralEmbedder(dir, nullptr));
  fs::remove(dir / "modules.json");
  {
    const embed::NeuralEmbedder plain(dir, nullptr);  // a dense encoder without the modules
    EXPECT_TRUE(plain.retrieval_outputs().dense);
    const embed::NeuralEmbedder splade(dir, nullptr, Precision::Float32, "splade");
    EXPECT_EQ(splade.retrieval_outputs(), (warden::embed::RetrievalOutputs{false, true, false}));
    EXPECT_EQ(splade.pooling(), "splade");  // TEI's name in /info
    EXPECT_EQ(sparse_of(splade), want);
    EXPECT_EQ(embed::NeuralEmbedder(dir, nullptr, Precision::Float32, "cls").pooling(), "cls");
    EXPECT_THROW(embed::NeuralEmbedder(dir, nullptr, Precision::Float32, "weighted"), Error);
  }
  fs::remove_all(dir);
  testing::run_fixture_command("warden-fixture --arch bert --head none --preset tiny --seed 1 --out DIR",
                               dir);
  try {
    const embed::NeuralEmbedder e(dir, nullptr, Precision::Float32, "splade");
    FAIL() << "a BertModel became a SPLADE model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("BertModel"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden

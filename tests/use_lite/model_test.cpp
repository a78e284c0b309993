#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/use_lite_embedder.hpp"
#include "use_lite/use_lite_reference.hpp"

namespace warden {
namespace {

struct Shared {
  ThreadPool pool{2};
  embed::UseLiteEmbedder embedder{test::use_lite_test_model(), &pool};
  std::vector<test::UseLiteCase> cases = test::load_use_lite_cases("use-lite-reference.jsonl");
};

Shared& shared() {
  static Shared s;
  return s;
}

float max_abs_diff(std::span<const float> a, std::span<const float> b) {
  float m = 0.0F;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(UseLiteModel, IsTheSemantic512dModel) {
  const auto& e = shared().embedder;
  EXPECT_EQ(e.id(), "use-lite");
  EXPECT_EQ(e.dim(), 512U);
  EXPECT_TRUE(e.semantic());
}

// Every line of the TF.js reference, each sentence embedded alone: the reference says
// embed([text]); tolerance 1e-5 max abs (an independent float64 port is 3.7e-7 away).
TEST(UseLiteModel, EveryReferenceSentenceAlone) {
  auto& s = shared();
  ASSERT_EQ(s.cases.size(), 60U);
  float worst = 0.0F;
  for (std::size_t i = 0; i < s.cases.size(); ++i) {
    const auto& c = s.cases[i];
    ASSERT_EQ(c.embedding.size(), 512U);
    const std::string_view text = c.text;
    const Embeddings e = s.embedder.embed(std::span(&text, 1));
    ASSERT_EQ(e.rows(), 1U);
    const float diff = max_abs_diff(e.row(0), c.embedding);
    EXPECT_LE(diff, 1e-5F) << "line " << i + 1 << ": " << c.text.substr(0, 60);
    worst = std::max(worst, diff);
  }
  RecordProperty("max_abs_diff_alone", std::to_string(worst));
  std::printf("USE-lite: max abs diff vs TF.js over %zu sentences alone: %.3g\n", s.cases.size(),
              static_cast<double>(worst));
}

// All 60 in one batch of mixed lengths (1 to 128 tokens, an empty text among them): the
// same vectors as alone (TF.js is bit-identical; we allow 1e-6) and within 1e-5 of TF.js.
TEST(UseLiteModel, OneMixedBatchMatchesAloneAndTheReference) {
  auto& s = shared();
  std::vector<std::string_view> texts;
  for (const auto& c : s.cases) texts.emplace_back(c.text);
  const Embeddings batch = s.embedder.embed(texts);
  ASSERT_EQ(batch.rows(), texts.size());
  float worst_alone = 0.0F;
  float worst_ref = 0.0F;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const Embeddings alone = s.embedder.embed(std::span(&texts[i], 1));
    const float d = max_abs_diff(batch.row(i), alone.row(0));
    EXPECT_LE(d, 1e-6F) << "line " << i + 1;
    worst_alone = std::max(worst_alone, d);
    const float r = max_abs_diff(batch.row(i), s.cases[i].embedding);
    EXPECT_LE(r, 1e-5F) << "line " << i + 1;
    worst_ref = std::max(worst_ref, r);
  }
  std::printf("USE-lite: batch of 60 vs alone: %.3g, vs TF.js: %.3g\n", static_cast<double>(worst_alone),
              static_cast<double>(worst_ref));
}

// The empty text gets a row (TF.js drops trailing empty rows; Warden returns one vector per
// text) equal to l2normalize(tanh(bias)), as the reference's "" line is.
TEST(UseLiteModel, EmptyTextInsideABatch) {
  auto& s = shared();
  const auto it = std::find_if(s.cases.begin(), s.cases.end(), [](const auto& c) { return c.text.empty(); });
  ASSERT_NE(it, s.cases.end());
  const std::vector<std::string_view> texts{"a", "", "How old are you?", ""};
  const Embeddings e = s.embedder.embed(texts);
  ASSERT_EQ(e.rows(), 4U);
  EXPECT_LE(max_abs_diff(e.row(1), it->embedding), 1e-5F);
  EXPECT_LE(max_abs_diff(e.row(3), it->embedding), 1e-5F);
}

// use-lite-batch-check.json's small batches (TF.js output rows, first 4 values each). TF.js
// gives trailing empty texts no row; Warden returns one row per text, so only the rows
// TF.js has are compared, and the extra rows must be the empty text's vector.
TEST(UseLiteModel, BatchCheckProbes) {
  const std::string json = read_file(std::string(WARDEN_TEST_DATA) + "/use-lite/use-lite-batch-check.json");
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(json);
  std::size_t probes = 0;
  for (const simdjson::dom::element probe : doc["probes"].get_array()) {
    std::vector<std::string> texts;
    for (const auto t : probe["texts"].get_array()) texts.emplace_back(std::string_view(t));
    const std::vector<std::string_view> views(texts.begin(), texts.end());
    const Embeddings e = shared().embedder.embed(views);
    ASSERT_EQ(e.rows(), texts.size());
    std::size_t row = 0;
    for (const auto first4 : probe["first4_of_each_row"].get_array()) {
      std::size_t j = 0;
      for (const auto v : first4.get_array()) {
        EXPECT_NEAR(e.row(row)[j], double(v), 1e-5) << "probe " << probes << " row " << row;
        ++j;
      }
      ++row;
    }
    ++probes;
  }
  EXPECT_EQ(probes, 6U);
}

TEST(UseLiteModel, InvalidUtf8IsAnErrorNamingTheInput) {
  const std::vector<std::string_view> texts{"fine", "bad \xC0\xAF"};
  try {
    (void)shared().embedder.embed(texts);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("input 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warden

// The engine against the independent PyTorch reference: for every golden file in
// tests/data/goldens/, regenerate its fixture with warden-fixture (checking the files'
// sha256 against the golden, so a generator change cannot silently invalidate it), run
// every case through the encoder in one mixed-length batch and alone, and compare hidden
// states, pooled and normalised embeddings and logits.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "model/encoder_model.hpp"
#include "model/heads/pooling.hpp"
#include "model/temp_dir.hpp"
#include "support/golden_fixture.hpp"

namespace warden::model {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::element;

constexpr double kTolerance = 1e-4;        // the bar for fp32 against PyTorch
constexpr double kBatchInvariance = 1e-5;  // alone vs inside a mixed batch

std::vector<fs::path> golden_files() {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(WARDEN_TEST_DATA) / "goldens";
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<float> floats(element array) {
  std::vector<float> v;
  for (const element x : array.get_array()) v.push_back(static_cast<float>(double(x)));
  return v;
}

std::vector<float> rows(element matrix) {
  std::vector<float> v;
  for (const element row : matrix.get_array()) {
    for (const element x : row.get_array()) v.push_back(static_cast<float>(double(x)));
  }
  return v;
}

double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
  return worst;
}

struct Case {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> type_ids;
  std::vector<float> hidden;
  std::vector<std::size_t> hidden_rows;  // empty: every row (long cases store a sample)
  std::vector<float> pooled[4];          // cls, mean, max, last
  std::vector<float> normalized[4];
  std::vector<float> logits;
  std::vector<float> sentence;  // after the folder's Dense modules (empty: it has none)
  std::string task;             // the task adapter the case runs with (empty: the base weights)
  std::int32_t adapter = engine::TokenBatch::kNoAdapter;
};

constexpr metadata::PoolingMode kModes[4] = {metadata::PoolingMode::Cls, metadata::PoolingMode::Mean,
                                             metadata::PoolingMode::Max, metadata::PoolingMode::LastToken};
constexpr const char* kModeNames[4] = {"cls", "mean", "max", "last"};

TEST(EncoderGolden, EveryFixtureMatchesThePyTorchReference) {
  const auto files = golden_files();
  ASSERT_FALSE(files.empty()) << "no golden files in tests/data/goldens";
  ThreadPool threads(2);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    simdjson::dom::parser parser;
    const std::string text = read_file(file);
    const element golden = parser.parse(text);

    // 1. The fixture, exactly as the golden was made from.
    testing::TempDir tmp;
    const fs::path dir = tmp / "model";
    ASSERT_NO_THROW(testing::run_fixture_command(std::string_view(golden["fixture"]["command"]), dir));
    for (const auto [name, sha] : golden["fixture"]["files_sha256"].get_object()) {
      const std::string got =
          testing::capture_command("sha256sum '" + (dir / std::string(name)).string() + "'");
      ASSERT_EQ(got.substr(0, 64), std::string_view(sha)) << "fixture file " << name << " changed";
    }

    // 2. The cases.
    // "the tokenizer's type_ids ..." for BERT; "none: ..." / "all zeros: ..." otherwise.
    const std::string_view fed = golden["reference"]["token_types_fed_to_model"];
    const bool feed_types = fed.rfind("the tokenizer's type_ids", 0) == 0;
    std::vector<Case> cases;
    for (const element c : golden["cases"].get_array()) {
      Case k;
      for (const element x : c["ids"].get_array()) k.ids.push_back(static_cast<std::uint32_t>(int64_t(x)));
      for (const element x : c["type_ids"].get_array()) {
        k.type_ids.push_back(feed_types ? static_cast<std::uint32_t>(int64_t(x)) : 0);
      }
      k.hidden = rows(c["last_hidden_state"]);
      element sampled;
      if (c["hidden_rows"].get(sampled) == simdjson::SUCCESS) {
        for (const element x : sampled.get_array())
          k.hidden_rows.push_back(static_cast<std::size_t>(int64_t(x)));
      }
      for (int m = 0; m < 4; ++m) {
        k.pooled[m] = floats(c["pooled"][kModeNames[m]]);
        k.normalized[m] = floats(c["normalized"][kModeNames[m]]);
      }
      element logits;
      if (c["logits"].get(logits) == simdjson::SUCCESS) k.logits = floats(logits);
      element sentence;
      if (c["sentence_embedding"].get(sentence) == simdjson::SUCCESS) k.sentence = floats(sentence);
      std::string_view task;
      if (c["task"].get(task) == simdjson::SUCCESS) k.task = task;
      cases.push_back(std::move(k));
    }
    ASSERT_GE(cases.size(), 5U);

    // 3. Warden, all cases in one mixed-length batch.
    const auto model = load_encoder_model(dir);
    const std::size_t h = model->encoder.dims().hidden;
    // A case's task is its adapter's index among config.json's tasks.
    for (auto& c : cases) {
      if (c.task.empty()) continue;
      const auto& tasks = model->config.task_adapters;
      const auto it =
          std::find_if(tasks.begin(), tasks.end(), [&](const auto& t) { return t.name == c.task; });
      ASSERT_NE(it, tasks.end()) << "task " << c.task;
      c.adapter = static_cast<std::int32_t>(it - tasks.begin());
    }
    engine::TokenBatch batch;
    for (const auto& c : cases) batch.add(c.ids, c.type_ids, 0, c.adapter);
    model->encoder.validate(batch);
    engine::EncoderWorkspace ws;
    const auto hidden = model->encoder.forward(batch, ws, &threads);
    const std::vector<float> all_hidden(hidden.begin(), hidden.end());
    std::vector<float> logits;
    if (model->head) {
      logits.resize(cases.size() * model->head->labels());
      model->head->logits(all_hidden, h, batch.offsets, logits, &threads);
    }
    double worst_hidden = 0, worst_pooled = 0, worst_logits = 0, worst_alone = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE("case " + std::to_string(i));
      const Case& c = cases[i];
      const std::span<const float> mine(all_hidden.data() + batch.offsets[i] * h, c.ids.size() * h);
      std::vector<float> compared(mine.begin(), mine.end());
      if (!c.hidden_rows.empty()) {
        compared.clear();
        for (const std::size_t r : c.hidden_rows) {
          ASSERT_LT(r, c.ids.size());
          compared.insert(compared.end(), mine.begin() + static_cast<std::ptrdiff_t>(r * h),
                          mine.begin() + static_cast<std::ptrdiff_t>((r + 1) * h));
        }
      }
      worst_hidden = std::max(worst_hidden, max_abs_diff(compared, c.hidden));
      EXPECT_LE(max_abs_diff(compared, c.hidden), kTolerance) << "last hidden state";
      for (int m = 0; m < 4; ++m) {
        std::vector<float> pooled(h);
        const std::size_t offsets[2] = {0, c.ids.size()};
        model::heads::pool(mine, h, offsets, kModes[m], pooled);
        worst_pooled = std::max(worst_pooled, max_abs_diff(pooled, c.pooled[m]));
        EXPECT_LE(max_abs_diff(pooled, c.pooled[m]), kTolerance) << kModeNames[m];
        l2_normalize(pooled, h);
        EXPECT_LE(max_abs_diff(pooled, c.normalized[m]), kTolerance) << kModeNames[m] << " normalized";
      }
      if (!c.sentence.empty()) {
        // The folder's pooling, then its Dense modules.
        ASSERT_FALSE(model->pooled_dense.empty()) << "the Dense modules were not read";
        std::vector<float> pooled(h);
        const std::size_t offsets[2] = {0, c.ids.size()};
        model::heads::pool(mine, h, offsets, model->pooling.mode, pooled);
        std::vector<float> sentence(heads::dense_modules_width(model->pooled_dense, h));
        heads::apply_dense_modules(model->pooled_dense, pooled, 1, sentence, &threads);
        worst_pooled = std::max(worst_pooled, max_abs_diff(sentence, c.sentence));
        EXPECT_LE(max_abs_diff(sentence, c.sentence), kTolerance) << "sentence_embedding (Dense modules)";
      }
      if (!c.logits.empty()) {
        ASSERT_TRUE(model->head.has_value());
        const std::span<const float> mine_logits(logits.data() + i * model->head->labels(),
                                                 model->head->labels());
        worst_logits = std::max(worst_logits, max_abs_diff(mine_logits, c.logits));
        EXPECT_LE(max_abs_diff(mine_logits, c.logits), kTolerance) << "logits";
      }

      // 4. Batch invariance: the same input alone.
      engine::TokenBatch alone;
      alone.add(c.ids, c.type_ids, 0, c.adapter);
      engine::EncoderWorkspace ws_alone;
      const auto single = model->encoder.forward(alone, ws_alone, &threads);
      worst_alone = std::max(worst_alone, max_abs_diff(single, mine));
      EXPECT_LE(max_abs_diff(single, mine), kBatchInvariance) << "alone vs batched";
    }
    std::printf("%s: max |diff| hidden %.2e, pooled %.2e, logits %.2e; alone vs batched %.2e\n",
                file.filename().c_str(), worst_hidden, worst_pooled, worst_logits, worst_alone);
  }
}

}  // namespace
}  // namespace warden::model

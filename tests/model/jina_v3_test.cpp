// jina-embeddings-v3 folders (XLMRobertaLoRA's checkpoint, auto_map naming
// XLMRobertaFlashConfig): the family, the rotary plan, the task adapters read from their
// parametrizations, a task's effect per sequence, and the load errors naming the key or tensor
// (the goldens jina-v3-none and jina-v3-tasks check the arithmetic: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/families/family.hpp"
#include "model/family_fixture.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

std::filesystem::path write_jina(const testing::TempDir& tmp) {
  return testing::write_family(tmp, "jina-v3", fixtures::Head::None);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "jina-v3", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

// One input's last hidden states with `adapter` (TokenBatch::kNoAdapter: the base weights).
std::vector<float> run(const EncoderModel& m, std::int32_t adapter) {
  const std::vector<std::uint32_t> ids = {0, 57, 301, 1200, 77, 2};
  engine::TokenBatch batch;
  batch.add(ids, {}, 0, adapter);
  m.encoder.validate(batch);
  engine::EncoderWorkspace ws;
  const auto h = m.encoder.forward(batch, ws, nullptr);
  return {h.begin(), h.end()};
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, static_cast<double>(std::abs(a[i] - b[i])));
  return d;
}

TEST(JinaV3, LoadsAsTheRemoteCodeWithItsTasks) {
  const testing::TempDir tmp;
  const auto dir = write_jina(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "xlm-roberta-flash");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  EXPECT_EQ(architecture_name(m->config, dir), "XLMRobertaModel");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_FALSE(d.position_embeddings);
  EXPECT_EQ(d.position_offset, 0U);  // rotary positions start at 0, not after padding_idx
  EXPECT_EQ(d.rotary_dims, 16U);     // the whole head
  EXPECT_DOUBLE_EQ(d.rotary_base, 20000.0);
  EXPECT_FALSE(d.rotary_interleaved);
  EXPECT_EQ(d.type_vocab, 1U);
  EXPECT_EQ(d.ffn_activation, kernels::Activation::Gelu);
  EXPECT_FLOAT_EQ(d.layer_norm_eps, 1e-5F);
  std::vector<std::string> names;
  for (const auto& t : m->config.task_adapters) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"retrieval.query", "retrieval.passage", "separation",
                                             "classification", "text-matching"}));
  EXPECT_EQ(m->config.task_adapters[0].instruction,
            "Represent the query for retrieving evidence documents: ");
  EXPECT_EQ(m->config.task_adapters[2].instruction, "");
}

TEST(JinaV3, EachTaskRunsItsOwnAdapterAndOnlyKnownOnesAreTaken) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(write_jina(tmp));
  const auto base = run(*m, engine::TokenBatch::kNoAdapter);
  std::vector<std::vector<float>> tasks;
  for (std::int32_t t = 0; t < 5; ++t) tasks.push_back(run(*m, t));
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    EXPECT_GT(max_diff(base, tasks[t]), 1e-3) << "task " << t << " ran the base weights";
    for (std::size_t u = 0; u < t; ++u) EXPECT_GT(max_diff(tasks[u], tasks[t]), 1e-3) << u << " vs " << t;
  }
  engine::TokenBatch bad;
  bad.add(std::vector<std::uint32_t>{0, 5, 2}, {}, 0, 5);
  EXPECT_THROW(m->encoder.validate(bad), Error);
}

// The adapters stay float32 whatever the model's precision: a task's rows in int8 and bf16 are
// as close to float32 as the base weights' (docs/precision.md's bars, as precision_test.cpp's).
TEST(JinaV3, TasksInReducedPrecisionStayWithinTheBars) {
  const testing::TempDir tmp;
  const auto dir = write_jina(tmp);
  const auto f32 = load_encoder_model(dir);
  for (const auto& [precision, bar] :
       {std::pair{Precision::Int8, 0.998}, std::pair{Precision::BFloat16, 0.9998}}) {
    const auto reduced = load_encoder_model(dir, nullptr, active_isa(), precision);
    const std::size_t h = f32->encoder.dims().hidden;
    for (std::int32_t t = 0; t < 5; ++t) {
      const auto want = run(*f32, t);
      const auto got = run(*reduced, t);
      double worst = 1;
      for (std::size_t r = 0; r < want.size() / h; ++r) {
        double dot = 0, nw = 0, ng = 0;
        for (std::size_t j = 0; j < h; ++j) {
          dot += double(want[r * h + j]) * double(got[r * h + j]);
          nw += double(want[r * h + j]) * double(want[r * h + j]);
          ng += double(got[r * h + j]) * double(got[r * h + j]);
        }
        worst = std::min(worst, dot / std::sqrt(nw * ng));
      }
      EXPECT_GE(worst, bar) << precision_name(precision) << " task " << t;
    }
  }
}

TEST(JinaV3, FreshAdaptersAreTheBaseWeights) {
  // load_trained_adapters false: XLMRobertaLoRA makes new adapters whose product is zero, so every
  // task runs the base weights (the checkpoint's adapters are not read).
  const testing::TempDir tmp;
  const auto m = load_encoder_model(
      with_config(tmp, "\"load_trained_adapters\": true", "\"load_trained_adapters\": false"));
  EXPECT_EQ(m->config.task_adapters.size(), 5U);
  EXPECT_EQ(max_diff(run(*m, engine::TokenBatch::kNoAdapter), run(*m, 3)), 0.0);
}

TEST(JinaV3, StockXlmRobertaKeepsItsOwnFamily) {
  // Without auto_map's remote config the same class name is stock XLM-R, which refuses rotary.
  const testing::TempDir tmp;
  const auto dir =
      with_config(tmp, "configuration_xlm_roberta.XLMRobertaFlashConfig", "configuration_xlm_roberta.Other");
  expect_load_error(dir, ErrorKind::Unsupported, "position_embedding_type");
}

TEST(JinaV3, VariantsNotRunAndMalformedKeysAreNamed) {
  const std::pair<std::string, std::string> corrupt[] = {
      {"\"rotary_emb_base\": 20000.0", "\"rotary_emb_base\": 0.5"},
      {"\"rotary_emb_base\": 20000.0", "\"rotary_emb_base\": 20000.0, \"rotary_emb_scale_base\": 512"},
      {"\"lora_rank\": 4", "\"lora_rank\": 0"},
      {"\"lora_adaptations\": [", "\"lora_adaptations\": [1, "},
      {"\"lora_adaptations\": [", "\"lora_adaptations\": [\"separation\", "},
      {"\"separation\": \"\"", "\"separation\": \"\", \"other\": \"\""},
      {"\"classification\": \"\",", ""},
      {"\"AutoConfig\": \"jinaai", "\"AutoConfig\": 7, \"x\": \"jinaai"},
  };
  for (const auto& [from, to] : corrupt) {
    SCOPED_TRACE(to);
    const testing::TempDir tmp;
    std::string key = to.empty() ? std::string() : to.substr(1, to.find('"', 1) - 1);
    if (to.find("scale_base") != std::string::npos) key = "rotary_emb_scale_base";
    if (to.find("AutoConfig") != std::string::npos) key = "auto_map";
    if (to.find("other") != std::string::npos || to.empty()) key = "task_instructions";
    expect_load_error(with_config(tmp, from, to), ErrorKind::CorruptFile, key);
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"hidden_act\": \"gelu\"", "\"hidden_act\": \"relu\""),
                      ErrorKind::Unsupported, "hidden_act");
  }
}

TEST(JinaV3, AMissingAdapterIsNamed) {
  const testing::TempDir tmp;
  const auto dir = write_jina(tmp);
  // Rename one adapter in the safetensors header (same length, so the offsets stay valid).
  const auto file = dir / "model.safetensors";
  std::string bytes = read_file(file);
  const std::string name = "roberta.encoder.layers.1.mlp.fc2.parametrizations.weight.0.lora_B";
  const std::size_t at = bytes.find(name);
  ASSERT_NE(at, std::string::npos);
  bytes[at + name.size() - 1] = 'X';
  write_file_atomic(file, bytes);
  expect_load_error(dir, ErrorKind::CorruptFile, name);
}

}  // namespace
}  // namespace warden::model

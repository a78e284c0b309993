// GTE ("NewModel", Alibaba-NLP/new-impl) folders load as their remote-code classes with rotary
// positions and fixed NTK scaling from rope_theta / rope_scaling; folders that do not fit are
// clear load errors naming the field or tensor (the goldens check the arithmetic:
// encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/families/family.hpp"
#include "model/family_fixture.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

std::filesystem::path write_gte(const testing::TempDir& tmp, fixtures::Head head = fixtures::Head::None) {
  return testing::write_family(tmp, "gte", head);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "gte", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

TEST(Gte, LoadsAsNewModelWithRotaryNtkScalingAndTheGatedMlp) {
  const testing::TempDir tmp;
  const auto dir = write_gte(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "gte");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_EQ(d.type_vocab, 0U);
  EXPECT_FALSE(d.position_embeddings);
  EXPECT_EQ(d.rotary_dims, 16U);
  EXPECT_TRUE(d.gated_ffn);
  EXPECT_EQ(d.max_positions, 8192U);
  // NTKScalingRotaryEmbedding: 1 / (θ·f)^(2i/d) / f^(2/d), at every length.
  ASSERT_EQ(d.rotary_inv_freq.size(), 8U);
  EXPECT_NEAR(d.rotary_inv_freq[1], 1.0 / std::pow(1e6, 2.0 / 16.0) / std::pow(2.0, 2.0 / 16.0), 1e-6);
  EXPECT_EQ(architecture_name(m->config, dir), "NewModel");
}

TEST(Gte, TheRerankerHasNewPoolerAndClassifier) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(write_gte(tmp, fixtures::Head::Reranker));
  EXPECT_EQ(m->kind(), ModelKind::Reranker);
  EXPECT_EQ(architecture_name(m->config, m->dir), "NewForSequenceClassification");
}

TEST(Gte, VariantsNotRunAreRefusedByName) {
  {
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "\"layer_norm_type\": \"layer_norm\"", "\"layer_norm_type\": \"rms_norm\""),
        ErrorKind::CorruptFile, "layer_norm_type");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"logn_attention_scale\": false", "\"logn_attention_scale\": true"),
                      ErrorKind::CorruptFile, "logn_attention_scale");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"type\": \"ntk\"", "\"type\": \"dynamic\""), ErrorKind::CorruptFile,
                      "rope_scaling");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"rope_theta\": 500000", "\"rope_theta\": 0"), ErrorKind::CorruptFile,
                      "rope_theta");
  }
}

TEST(Gte, WeightsThatDoNotFitAreNamed) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"intermediate_size\": 128", "\"intermediate_size\": 96"),
                      ErrorKind::CorruptFile, "mlp.up_gate_proj.weight");
  }
  {
    // Without pack_qkv the layers need q_proj/k_proj/v_proj.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"pack_qkv\": true", "\"pack_qkv\": false"), ErrorKind::CorruptFile,
                      "attention.q_proj");
  }
  {
    // A token-type table the config promises.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"type_vocab_size\": 0", "\"type_vocab_size\": 2"),
                      ErrorKind::CorruptFile, "embeddings.token_type_embeddings.weight");
  }
}

}  // namespace
}  // namespace warden::model

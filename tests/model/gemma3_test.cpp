// Gemma3 folders (EmbeddingGemma) load as transformers' Gemma3TextModel used as an encoder: the
// window Gemma3TextConfig computes from sliding_window, the layer kinds and their rotary bases,
// Gemma's scales and norms; keys and tensors that do not fit are load errors naming them
// (tests/data/goldens/gemma3-none.json checks the arithmetic against the PyTorch reference:
// encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/encoder_model.hpp"
#include "model/family_fixture.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "gemma3", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

// The fixture's layer_types: five sliding layers, then a full one.
const std::vector<bool> kSliding{true, true, true, true, true, false};

TEST(Gemma3, LoadsAsGemma3TextModelWithEmbeddingGemmasSettings) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(testing::write_family(tmp, "gemma3", fixtures::Head::None));
  EXPECT_EQ(m->family->name, "gemma3");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  EXPECT_EQ(architecture_name(m->config, m->dir), "Gemma3TextModel");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_FALSE(d.causal);
  EXPECT_TRUE(d.qk_norm);
  EXPECT_TRUE(d.pre_norm);
  EXPECT_TRUE(d.rms_norm);
  EXPECT_EQ(d.kv_heads, 1U);
  EXPECT_EQ(d.head_dim, 32U);  // its own: 3 heads of 32 over a hidden size of 64
  EXPECT_EQ(d.ffn_activation, kernels::Activation::GeluTanh);
  EXPECT_FLOAT_EQ(d.embedding_scale, 8.0F);                                 // sqrt(64)
  EXPECT_FLOAT_EQ(d.attention_scale.value_or(0), 1.0F / std::sqrt(24.0F));  // query_pre_attn_scalar
  // sliding_window 16, bidirectional: the exclusive bound 16 / 2 + 1 = 9, so |i - j| <= 8.
  EXPECT_EQ(d.attention_window, 8U);
  EXPECT_EQ(d.windowed_layers, kSliding);
  EXPECT_EQ(d.local_rotary_layers, kSliding);
  EXPECT_DOUBLE_EQ(d.rotary_base, 1000000.0);
  EXPECT_DOUBLE_EQ(d.local_rotary_base, 10000.0);
  // 2_Dense and 3_Dense after the mean pooling: 64 -> 256 -> 64.
  ASSERT_EQ(m->pooled_dense.size(), 2U);
  EXPECT_EQ(m->pooled_dense[0].linear.n(), 256U);
  EXPECT_EQ(m->pooled_dense[1].linear.n(), 64U);
}

TEST(Gemma3, CausalAttentionKeepsTheWindowAsWritten) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(
      with_config(tmp, "\"use_bidirectional_attention\": true", "\"use_bidirectional_attention\": false"));
  EXPECT_TRUE(m->encoder.dims().causal);
  EXPECT_EQ(m->encoder.dims().attention_window, 15U);  // i - j < 16
}

TEST(Gemma3, WithoutLayerTypesThePatternChoosesTheSlidingLayers) {
  const testing::TempDir tmp;
  const auto dir = testing::write_family(tmp, "gemma3", fixtures::Head::None);
  testing::edit_config(dir, "\"layer_types\"", "\"was_layer_types\"");
  testing::edit_config(dir, "\"_sliding_window_pattern\": 6", "\"sliding_window_pattern\": 3");
  const auto m = load_encoder_model(dir);
  const std::vector<bool> every_third_full{true, true, false, true, true, false};
  EXPECT_EQ(m->encoder.dims().windowed_layers, every_third_full);
}

TEST(Gemma3, ANullSlidingWindowLeavesEveryLayerWhole) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(with_config(tmp, "\"sliding_window\": 16", "\"sliding_window\": null"));
  EXPECT_TRUE(m->encoder.dims().windowed_layers.empty());
  EXPECT_EQ(m->encoder.dims().local_rotary_layers, kSliding);  // the rotary bases still differ
}

TEST(Gemma3, RopeParametersPerLayerTypeSetTheBases) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(
      with_config(tmp, "\"rope_scaling\": null",
                  R"("rope_parameters": {"full_attention": {"rope_theta": 500000.0, "rope_type": "default"},
          "sliding_attention": {"rope_theta": 20000.0, "rope_type": "default"}})"));
  EXPECT_DOUBLE_EQ(m->encoder.dims().rotary_base, 500000.0);
  EXPECT_DOUBLE_EQ(m->encoder.dims().local_rotary_base, 20000.0);
}

TEST(Gemma3, ConfigKeysThatDoNotFitAreNamed) {
  struct Bad {
    std::string from, to;
    ErrorKind kind;
    std::string names;
  };
  const Bad cases[] = {
      {"\"sliding_window\": 16", "\"sliding_window\": 1", ErrorKind::CorruptFile, "sliding_window"},
      {"\"num_key_value_heads\": 1", "\"num_key_value_heads\": 2", ErrorKind::CorruptFile,
       "num_key_value_heads"},
      {"\"query_pre_attn_scalar\": 24", "\"query_pre_attn_scalar\": -1", ErrorKind::CorruptFile,
       "query_pre_attn_scalar"},
      {"\"head_dim\": 32", "\"head_dim\": 31", ErrorKind::CorruptFile, "head_dim"},
      {"\"attn_logit_softcapping\": null", "\"attn_logit_softcapping\": 50.0", ErrorKind::Unsupported,
       "attn_logit_softcapping"},
      {"\"rope_scaling\": null", R"("rope_scaling": {"rope_type": "linear", "factor": 8.0})",
       ErrorKind::CorruptFile, "rope_scaling"},
      {"\"hidden_activation\": \"gelu_pytorch_tanh\"", "\"hidden_activation\": \"quick_gelu\"",
       ErrorKind::Unsupported, "hidden_activation"},
      {"\"sliding_attention\",", "\"local_attention\",", ErrorKind::CorruptFile, "layer_types"},
      {"\"num_hidden_layers\": 6", "\"num_hidden_layers\": 5", ErrorKind::CorruptFile, "layer_types"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.to);
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, b.from, b.to), b.kind, b.names);
  }
}

TEST(Gemma3, AMissingNormIsNamed) {
  const testing::TempDir tmp;
  const auto dir = testing::write_family(tmp, "gemma3", fixtures::Head::None);
  // A seventh layer the checkpoint does not have (layer_types lists it as full).
  testing::edit_config(dir, "\"num_hidden_layers\": 6", "\"num_hidden_layers\": 7");
  testing::edit_config(dir, "\"full_attention\"", "\"full_attention\", \"full_attention\"");
  expect_load_error(dir, ErrorKind::CorruptFile, "layers.6.self_attn.q_proj");
}

}  // namespace
}  // namespace warden::model

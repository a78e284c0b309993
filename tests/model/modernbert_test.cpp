// ModernBERT folders load as transformers' ModernBert* classes: pre-LN layers, rotary positions
// with a global and a local base, sliding windows on the local layers, the GeGLU MLP and no
// biases; the older (global_rope_theta / local_rope_theta) and newer (rope_parameters,
// layer_types) config keys both; and folders that do not fit are clear load errors naming the
// field or tensor (the goldens check the arithmetic: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/families/family.hpp"
#include "model/family_fixture.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

std::filesystem::path write_modernbert(const testing::TempDir& tmp,
                                       fixtures::Head head = fixtures::Head::None) {
  return testing::write_family(tmp, "modernbert", head);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "modernbert", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

// The last hidden states of one 40-token input (long enough to pass the tiny fixture's window).
std::vector<float> hidden_states(const EncoderModel& m) {
  return testing::hidden_states(m, 40, 100, 7);
}

TEST(ModernBert, LoadsAsModernBertModelWithTwoRotaryBasesAndWindowsOnTheLocalLayers) {
  const testing::TempDir tmp;
  const auto dir = write_modernbert(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "modernbert");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  EXPECT_EQ(architecture_name(m->config, dir), "ModernBertModel");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_TRUE(d.pre_norm);
  EXPECT_TRUE(d.gated_ffn);
  EXPECT_FALSE(d.position_embeddings);
  EXPECT_EQ(d.type_vocab, 0U);
  EXPECT_EQ(d.max_positions, 8192U);
  EXPECT_EQ(d.rotary_dims, 16U);
  EXPECT_EQ(d.rotary_base, 160000.0);
  EXPECT_EQ(d.local_rotary_base, 10000.0);
  EXPECT_EQ(d.attention_window, 8U);  // local_attention 16 / 2
  // global_attn_every_n_layers 3: layer 0 global, layers 1 and 2 local (window and base).
  EXPECT_EQ(d.windowed_layers, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(d.local_rotary_layers, (std::vector<bool>{false, true, true}));
  EXPECT_FLOAT_EQ(d.layer_norm_eps, 1e-5F);
}

TEST(ModernBert, TheSequenceClassifierPoolsAsClassifierPoolingSays) {
  {
    const testing::TempDir tmp;
    const auto m = load_encoder_model(write_modernbert(tmp, fixtures::Head::Reranker));
    EXPECT_EQ(m->kind(), ModelKind::Reranker);
    EXPECT_EQ(architecture_name(m->config, m->dir), "ModernBertForSequenceClassification");
    ASSERT_TRUE(m->head.has_value());
    EXPECT_EQ(m->head->pooling, metadata::PoolingMode::Mean);
    EXPECT_FALSE(m->head->norm.gamma.empty());
  }
  {
    const testing::TempDir tmp;
    const auto m = load_encoder_model(write_modernbert(tmp, fixtures::Head::Classifier));
    EXPECT_EQ(m->kind(), ModelKind::Classifier);
    ASSERT_TRUE(m->head.has_value());
    EXPECT_EQ(m->head->pooling, metadata::PoolingMode::Cls);
  }
}

TEST(ModernBert, NewerRopeParametersAndLayerTypesMeanTheSameModel) {
  const testing::TempDir old_tmp;
  const auto old_model = load_encoder_model(write_modernbert(old_tmp));
  // transformers >= 4.57 saves the thetas per layer type, and the layer types themselves.
  const testing::TempDir tmp;
  const auto dir = with_config(
      tmp, "\"global_rope_theta\": 160000.0",
      "\"rope_parameters\": {\"full_attention\": {\"rope_theta\": 160000.0, \"rope_type\": \"default\"}, "
      "\"sliding_attention\": {\"rope_theta\": 10000.0, \"rope_type\": \"default\"}}, "
      "\"layer_types\": [\"full_attention\", \"sliding_attention\", \"sliding_attention\"]");
  testing::edit_config(dir, "\"local_rope_theta\": 10000.0", "\"local_rope_theta\": 1.5");  // overridden
  const auto new_model = load_encoder_model(dir);
  EXPECT_EQ(hidden_states(*new_model), hidden_states(*old_model));
  // A different local theta gives different states (the comparison above can fail).
  const testing::TempDir other_tmp;
  const auto other = load_encoder_model(
      with_config(other_tmp, "\"local_rope_theta\": 10000.0", "\"local_rope_theta\": 20000.0"));
  EXPECT_NE(hidden_states(*other), hidden_states(*old_model));
}

TEST(ModernBert, AWindowAsWideAsTheInputMatchesNoWindow) {
  // With local_attention past the input's length every layer sees every token: the same states
  // as a model whose every layer is global (global_attn_every_n_layers 1), given the same bases.
  const testing::TempDir wide_tmp;
  const auto wide =
      load_encoder_model(with_config(wide_tmp, "\"local_attention\": 16", "\"local_attention\": 100"));
  const testing::TempDir global_tmp;
  const auto global_dir = with_config(global_tmp, "\"global_attn_every_n_layers\": 3",
                                      "\"global_attn_every_n_layers\": 1, \"layer_types\": "
                                      "[\"full_attention\", \"sliding_attention\", \"sliding_attention\"]");
  const auto global = load_encoder_model(global_dir);
  EXPECT_EQ(global->encoder.dims().windowed_layers, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(hidden_states(*wide), hidden_states(*global));
  const testing::TempDir narrow_tmp;
  EXPECT_NE(hidden_states(*load_encoder_model(write_modernbert(narrow_tmp))), hidden_states(*global));
}

TEST(ModernBert, MalformedConfigsAreNamed) {
  const std::vector<std::pair<std::string, std::string>> edits{
      {"\"local_attention\": 16", "\"local_attention\": 0"},
      {"\"local_attention\": 16", "\"local_attention\": \"wide\""},
      {"\"global_attn_every_n_layers\": 3", "\"global_attn_every_n_layers\": 0"},
      {"\"global_rope_theta\": 160000.0", "\"global_rope_theta\": -1"},
      {"\"local_rope_theta\": 10000.0", "\"local_rope_theta\": 0.5"},
      {"\"norm_eps\": 1e-05", "\"norm_eps\": 0"},
      {"\"classifier_pooling\": \"cls\"", "\"classifier_pooling\": \"max\""},
  };
  for (const auto& [from, to] : edits) {
    SCOPED_TRACE(to);
    const testing::TempDir tmp;
    const std::string field = to.substr(1, to.find('"', 1) - 1);
    expect_load_error(with_config(tmp, from, to), ErrorKind::CorruptFile, field);
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"local_rope_theta\": 10000.0",
                                  "\"layer_types\": [\"full_attention\"], \"local_rope_theta\": 10000.0"),
                      ErrorKind::CorruptFile, "layer_types");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"local_rope_theta\": 10000.0",
                                  "\"layer_types\": [\"full_attention\", \"chunked\", \"full_attention\"], "
                                  "\"local_rope_theta\": 10000.0"),
                      ErrorKind::CorruptFile, "layer_types");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "\"global_rope_theta\": 160000.0",
                    "\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"yarn\", \"factor\": 4.0}}"),
        ErrorKind::CorruptFile, "rope_parameters");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "\"hidden_activation\": \"gelu\"", "\"hidden_activation\": \"quick_gelu\""),
        ErrorKind::Unsupported, "hidden_activation");
  }
}

TEST(ModernBert, WeightsThatDoNotFitAreNamed) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"intermediate_size\": 96", "\"intermediate_size\": 128"),
                      ErrorKind::CorruptFile, "mlp.Wi.weight");
  }
  {
    // A norm bias the config promises and the checkpoint does not have.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"norm_bias\": false", "\"norm_bias\": true"), ErrorKind::CorruptFile,
                      "embeddings.norm.bias");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"attention_bias\": false", "\"attention_bias\": true"),
                      ErrorKind::CorruptFile, "attn.Wqkv.bias");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"num_hidden_layers\": 3", "\"num_hidden_layers\": 4"),
                      ErrorKind::CorruptFile, "layers.3.");
  }
}

}  // namespace
}  // namespace warden::model

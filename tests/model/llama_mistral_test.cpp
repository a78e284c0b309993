// Llama and Mistral folders load as transformers' LlamaModel / MistralModel used as encoders: the
// decoders' layers with Llama's optional biases, Llama 3's rope_scaling, Mistral's sliding
// window, and is_causal for every decoder; keys that do not fit are load errors naming them
// (tests/data/goldens/llama-none.json and mistral-none.json check the arithmetic against the
// PyTorch reference: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/rotary.hpp"
#include "model/encoder_model.hpp"
#include "model/family_fixture.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

using testing::expect_load_error;

std::filesystem::path with_config(const testing::TempDir& tmp, std::string_view arch, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, arch, fixtures::Head::None, from, to);
}

TEST(Llama, LoadsWithLlama3sScaledRotaryFrequencies) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(testing::write_family(tmp, "llama", fixtures::Head::None));
  EXPECT_EQ(m->family->name, "llama");
  EXPECT_EQ(architecture_name(m->config, m->dir), "LlamaModel");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_TRUE(d.causal);
  EXPECT_FALSE(d.qk_norm);
  EXPECT_EQ(d.kv_heads, 2U);
  EXPECT_EQ(d.head_dim, 16U);
  // theta 5e5 over 16 values: wavelengths 6.3, 32, 167, 860 (kept: below 8192 / 4), 4470 (between
  // 2048 and 8192: blended), 23000, 120000, 620000 (above 8192: divided by 32).
  const std::vector<float> plain = kernels::rotary_inv_freq(500000.0, 16);
  ASSERT_EQ(d.rotary_inv_freq.size(), 8U);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(d.rotary_inv_freq[i], plain[i]) << i;
  EXPECT_LT(d.rotary_inv_freq[4], plain[4]);
  EXPECT_GT(d.rotary_inv_freq[4], plain[4] / 32.0F);
  for (std::size_t i = 5; i < 8; ++i) EXPECT_FLOAT_EQ(d.rotary_inv_freq[i], plain[i] / 32.0F) << i;
}

TEST(Llama, LinearRopeScalingDividesEveryFrequency) {
  const testing::TempDir tmp;
  const auto m =
      load_encoder_model(with_config(tmp, "llama", "\"rope_type\": \"llama3\"", "\"rope_type\": \"linear\""));
  const std::vector<float> plain = kernels::rotary_inv_freq(500000.0, 16);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(m->encoder.dims().rotary_inv_freq[i], plain[i] / 32.0F);
}

TEST(Llama, BiasesAreReadWhenTheConfigSaysSo) {
  const testing::TempDir tmp;
  // The fixture's checkpoint has no biases: asking for them names the first missing one.
  expect_load_error(with_config(tmp, "llama", "\"mlp_bias\": false", "\"mlp_bias\": true"),
                    ErrorKind::CorruptFile, "mlp.gate_proj.bias");
}

TEST(Llama, IsCausalFalseIsBidirectional) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(
      with_config(tmp, "llama", "\"mlp_bias\": false", "\"is_causal\": false, \"mlp_bias\": false"));
  EXPECT_FALSE(m->encoder.dims().causal);
}

TEST(Llama, RopeTypesWardenDoesNotRunAreNamed) {
  for (const std::string& type : {std::string("yarn"), std::string("dynamic"), std::string("longrope")}) {
    SCOPED_TRACE(type);
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "llama", "\"rope_type\": \"llama3\"", "\"rope_type\": \"" + type + "\""),
        ErrorKind::CorruptFile, type);
  }
  const testing::TempDir tmp;
  expect_load_error(with_config(tmp, "llama", "\"low_freq_factor\": 1.0", "\"low_freq_factor\": 0"),
                    ErrorKind::CorruptFile, "low_freq_factor");
}

TEST(Mistral, LoadsCausalWithinItsSlidingWindow) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(testing::write_family(tmp, "mistral", fixtures::Head::None));
  EXPECT_EQ(m->family->name, "mistral");
  EXPECT_EQ(architecture_name(m->config, m->dir), "MistralModel");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_TRUE(d.causal);
  EXPECT_EQ(d.attention_window, 15U);  // i - j < 16
  EXPECT_EQ(d.windowed_layers, std::vector<bool>(2, true));
  EXPECT_EQ(m->pooling.mode, metadata::PoolingMode::LastToken);
}

TEST(Mistral, ANullSlidingWindowIsNone) {
  const testing::TempDir tmp;
  const auto m =
      load_encoder_model(with_config(tmp, "mistral", "\"sliding_window\": 16", "\"sliding_window\": null"));
  EXPECT_TRUE(m->encoder.dims().windowed_layers.empty());
}

TEST(Mistral, ConfigKeysThatDoNotFitAreNamed) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "mistral", "\"sliding_window\": 16", "\"sliding_window\": 1"),
                      ErrorKind::CorruptFile, "sliding_window");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "mistral", "\"sliding_window\": 16", "\"sliding_window\": 16, \"is_causal\": false"),
        ErrorKind::Unsupported, "is_causal");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "mistral", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"),
                      ErrorKind::CorruptFile, "num_key_value_heads");
  }
}

}  // namespace
}  // namespace warden::model

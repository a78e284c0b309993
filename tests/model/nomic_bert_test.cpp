// NomicBERT folders load with the sizes NomicBertModel builds (vocabulary padded to 64, the
// gated MLP rounded up to 256) and the rotary settings of their GPT-2-style config; folders
// that do not fit are clear load errors naming the field or tensor (the goldens check the
// arithmetic, the dynamic NTK scaling included: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <string>
#include <utility>
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

std::filesystem::path write_nomic(const testing::TempDir& tmp) {
  return testing::write_family(tmp, "nomic-bert", fixtures::Head::None);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "nomic-bert", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

TEST(NomicBert, ReadsGpt2StyleKeysAndTheSizesTheModelBuilds) {
  const testing::TempDir tmp;
  const auto dir = write_nomic(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "nomic-bert");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_EQ(d.hidden, 64U);
  EXPECT_EQ(d.heads, 4U);
  EXPECT_EQ(d.vocab, 30528U);         // 30522 padded to a multiple of 64
  EXPECT_EQ(d.intermediate, 256U);    // n_inner 200 rounded up to 256
  EXPECT_EQ(d.max_positions, 8192U);  // n_positions
  EXPECT_EQ(d.rotary_dims, 16U);      // the whole head (rotary_emb_fraction 1.0)
  EXPECT_DOUBLE_EQ(d.rotary_base, 1000.0);
  ASSERT_TRUE(d.rotary_ntk_factor.has_value());
  EXPECT_EQ(d.rotary_max_trained, 128U);
  EXPECT_FALSE(d.position_embeddings);
  EXPECT_TRUE(d.gated_ffn);
  EXPECT_EQ(d.ffn_activation, kernels::Activation::Silu);
  EXPECT_DOUBLE_EQ(d.layer_norm_eps, 1e-12F);
  EXPECT_EQ(architecture_name(m->config, dir), "NomicBertModel");
  metadata::ModelConfig bare = m->config;
  bare.architectures.clear();
  EXPECT_EQ(architecture_name(bare, dir), "NomicBertModel");
}

TEST(NomicBert, VariantsNotRunAreRefusedByName) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"prenorm\": false", "\"prenorm\": true"), ErrorKind::CorruptFile,
                      "prenorm");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "\"activation_function\": \"swiglu\"", "\"activation_function\": \"glu\""),
        ErrorKind::Unsupported, "activation_function 'glu'");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"rotary_emb_scale_base\": null", "\"rotary_emb_scale_base\": 512"),
                      ErrorKind::CorruptFile, "rotary_emb_scale_base");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"architectures\": [\n    \"NomicBertModel\"",
                                  "\"architectures\": [\n    \"NomicBertForSequenceClassification\""),
                      ErrorKind::Unsupported, "NomicBertForSequenceClassification");
  }
}

TEST(NomicBert, MalformedRotaryAndWeightsAreNamed) {
  {
    // 0.3 of a 16-wide head is 4.8 dimensions.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"rotary_emb_fraction\": 1.0", "\"rotary_emb_fraction\": 0.3"),
                      ErrorKind::CorruptFile, "rotary_emb_fraction");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"rotary_emb_base\": 1000", "\"rotary_emb_base\": \"big\""),
                      ErrorKind::CorruptFile, "rotary_emb_base");
  }
  {
    // Biases the config promises must be in the file.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"qkv_proj_bias\": false", "\"qkv_proj_bias\": true"),
                      ErrorKind::CorruptFile, "encoder.layers.0.attn.Wqkv.bias");
  }
  {
    // An n_inner whose rounding no longer matches the weights' 256.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"n_inner\": 200", "\"n_inner\": 300"), ErrorKind::CorruptFile,
                      "mlp.fc12.weight");
  }
  {
    // Without rotary, NomicBertEmbeddings has a position table, which this file lacks.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"rotary_emb_fraction\": 1.0", "\"rotary_emb_fraction\": 0.0"),
                      ErrorKind::CorruptFile, "embeddings.position_embeddings.weight");
  }
}

std::filesystem::path moe_with_config(const testing::TempDir& tmp, const std::string& from,
                                      const std::string& to) {
  return testing::family_with_config(tmp, "nomic-bert-moe", fixtures::Head::None, from, to);
}

// nomic-embed-text-v2-moe's layout: the odd layers are mixtures of experts (the goldens of
// nomic-bert-moe-none check the routing and the arithmetic against the PyTorch reference).
TEST(NomicBertMoe, TheOddLayersAreMixturesOfExperts) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(testing::write_family(tmp, "nomic-bert-moe", fixtures::Head::None));
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_EQ(d.moe_layers, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(d.experts, 4U);
  EXPECT_EQ(d.moe_top_k, 2U);
  EXPECT_EQ(d.ffn_activation, kernels::Activation::Gelu);
  EXPECT_FALSE(d.gated_ffn);
  EXPECT_GT(m->encoder.layer_bytes(), 0U);
}

TEST(NomicBertMoe, RoutingVariantsNotRunAndMissingExpertsAreNamed) {
  const std::pair<std::string, std::string> refused[] = {
      {"\"num_shared_experts\": 0", "\"num_shared_experts\": 1"},
      {"\"expert_choice_router\": false", "\"expert_choice_router\": true"},
      {"\"moe_normalize_expert_weights\": false", "\"moe_normalize_expert_weights\": 1.0"},
      {"\"moe_top_k\": 2", "\"moe_top_k\": 5"},
      {"\"num_experts\": 4", "\"num_experts\": 0"},
  };
  for (const auto& [from, to] : refused) {
    SCOPED_TRACE(to);
    const testing::TempDir tmp;
    const std::string key = to.substr(1, to.find('"', 1) - 1);
    expect_load_error(moe_with_config(tmp, from, to), ErrorKind::CorruptFile, key);
  }
  {
    // More experts than the stacked matrices hold.
    const testing::TempDir tmp;
    expect_load_error(moe_with_config(tmp, "\"num_experts\": 4", "\"num_experts\": 6"),
                      ErrorKind::CorruptFile, "encoder.layers.1.mlp.router.layer.weight");
  }
  {
    // moe_every_n_layers 1: upstream's i % 1 == 1 marks no layer, so layer 1 needs the plain MLP
    // its file does not have.
    const testing::TempDir tmp;
    expect_load_error(moe_with_config(tmp, "\"moe_every_n_layers\": 2", "\"moe_every_n_layers\": 1"),
                      ErrorKind::CorruptFile, "encoder.layers.1.mlp.fc1");
  }
}

}  // namespace
}  // namespace warden::model

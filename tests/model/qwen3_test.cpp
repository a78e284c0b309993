// Qwen3 folders load as transformers' Qwen3Model used as an encoder (Qwen3-Embedding): pre-norm
// decoder layers with RMSNorms, grouped-query causal attention with per-head query/key norms
// and rotary positions, the SwiGLU MLP; config keys and tensors that do not fit are clear load
// errors naming them (tests/data/goldens/qwen3-none.json checks the arithmetic against the
// PyTorch reference: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/families/family.hpp"
#include "model/families/registry.hpp"
#include "model/family_fixture.hpp"
#include "model/formats/weights.hpp"
#include "model/lm_score_head.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

std::filesystem::path write_qwen3(const testing::TempDir& tmp, fixtures::Head head = fixtures::Head::None) {
  return testing::write_family(tmp, "qwen3", head);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "qwen3", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

// The last hidden states of one 20-token input.
std::vector<float> hidden_states(const EncoderModel& m, std::size_t tokens = 20) {
  return testing::hidden_states(m, tokens, 50, 11);
}

// The folder's model.safetensors rewritten without the tensors `drop` names.
void drop_tensors(const std::filesystem::path& dir, const std::vector<std::string>& drop) {
  std::vector<std::string> names;
  std::vector<std::vector<std::byte>> blobs;
  std::vector<formats::TensorToWrite> tensors;
  {
    const formats::ModelWeights w = formats::ModelWeights::open_dir(dir);
    for (const std::string_view n : w.names()) {
      if (std::find(drop.begin(), drop.end(), n) != drop.end()) continue;
      const formats::Tensor* t = w.find(n);
      names.emplace_back(n);
      blobs.emplace_back(t->data.begin(), t->data.end());
      tensors.push_back({names.back(), t->dtype, t->shape, {}});
    }
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i].data = blobs[i];
  formats::write_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
}

TEST(Qwen3, LoadsAsACausalPreNormEncoderWithGroupedQueryHeads) {
  const testing::TempDir tmp;
  const auto dir = write_qwen3(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "qwen3");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  EXPECT_EQ(architecture_name(m->config, dir), "Qwen3ForCausalLM");
  EXPECT_EQ(m->weight_prefix, "");  // the embedding repos' bare Qwen3Model names
  EXPECT_EQ(m->pooling.mode, metadata::PoolingMode::LastToken);
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_TRUE(d.pre_norm);
  EXPECT_TRUE(d.rms_norm);
  EXPECT_TRUE(d.qk_norm);
  EXPECT_TRUE(d.causal);
  EXPECT_TRUE(d.gated_ffn);
  EXPECT_EQ(d.ffn_activation, kernels::Activation::Silu);
  EXPECT_FALSE(d.position_embeddings);
  EXPECT_EQ(d.type_vocab, 0U);
  EXPECT_EQ(d.heads, 4U);
  EXPECT_EQ(d.kv_heads, 2U);
  EXPECT_EQ(d.head_size(), 32U);  // wider than hidden / heads = 16
  EXPECT_EQ(d.qkv_width(), (4U + 2U * 2U) * 32U);
  EXPECT_EQ(d.rotary_dims, 32U);
  EXPECT_EQ(d.rotary_base, 1e6);
  EXPECT_EQ(d.max_positions, 32768U);
  EXPECT_FLOAT_EQ(d.layer_norm_eps, 1e-6F);
  // The query instruction of Qwen3-Embedding's config_sentence_transformers.json.
  ASSERT_TRUE(m->st.prompts.contains("query"));
  EXPECT_TRUE(m->st.prompts.at("query").starts_with("Instruct: "));
}

TEST(Qwen3, AttentionIsCausal) {
  // A token's state depends only on the tokens up to it: the first 12 rows of a 20-token input
  // are those of its 12-token prefix.
  const testing::TempDir tmp;
  const auto m = load_encoder_model(write_qwen3(tmp));
  const std::vector<float> full = hidden_states(*m, 20);
  const std::vector<float> prefix = hidden_states(*m, 12);
  const std::size_t h = m->encoder.dims().hidden;
  for (std::size_t i = 0; i < 12 * h; ++i) ASSERT_EQ(full[i], prefix[i]) << i;
}

TEST(Qwen3, NewerRopeParametersMeanTheSameModel) {
  const testing::TempDir old_tmp;
  const auto old_model = load_encoder_model(write_qwen3(old_tmp));
  const testing::TempDir tmp;
  const auto model = load_encoder_model(
      with_config(tmp, "\"rope_theta\": 1000000",
                  "\"rope_parameters\": {\"rope_theta\": 1000000.0, \"rope_type\": \"default\"}"));
  EXPECT_EQ(hidden_states(*model), hidden_states(*old_model));
  const testing::TempDir other_tmp;
  const auto other =
      load_encoder_model(with_config(other_tmp, "\"rope_theta\": 1000000", "\"rope_theta\": 10000"));
  EXPECT_NE(hidden_states(*other), hidden_states(*old_model));
}

TEST(Qwen3, ConfigsThatDoNotFitAreNamed) {
  const std::vector<std::pair<std::string, std::string>> corrupt{
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"},  // does not divide 4 heads
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 0"},
      {"\"head_dim\": 32", "\"head_dim\": 31"},
      {"\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": 0"},
      {"\"rope_theta\": 1000000", "\"rope_theta\": 0.5"},
      {"\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}"},
      {"\"use_sliding_window\": false", "\"use_sliding_window\": true"},
  };
  for (const auto& [from, to] : corrupt) {
    SCOPED_TRACE(to);
    const testing::TempDir tmp;
    const std::string field = to.substr(1, to.find('"', 1) - 1);
    expect_load_error(with_config(tmp, from, to), ErrorKind::CorruptFile, field);
  }
  const testing::TempDir tmp;
  expect_load_error(with_config(tmp, "\"hidden_act\": \"silu\"", "\"hidden_act\": \"quick_gelu\""),
                    ErrorKind::Unsupported, "hidden_act");
}

TEST(Qwen3, WeightsThatDoNotFitAreNamed) {
  {
    // Query/key norms the architecture needs and the checkpoint lacks.
    const testing::TempDir tmp;
    const auto dir = write_qwen3(tmp);
    drop_tensors(dir, {"layers.1.self_attn.k_norm.weight"});
    expect_load_error(dir, ErrorKind::CorruptFile, "layers.1.self_attn.k_norm.weight");
  }
  {
    // The config's key/value heads and the projections' shapes disagree.
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 4"),
                      ErrorKind::CorruptFile, "self_attn.k_proj.weight");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"attention_bias\": false", "\"attention_bias\": true"),
                      ErrorKind::CorruptFile, "self_attn.q_proj.bias");
  }
}

TEST(Qwen3, AFolderWithoutPoolingIsAnLlmRerankerWithItsCardsTemplate) {
  // Qwen3-Reranker's layout: the whole Qwen3ForCausalLM, no sentence-transformers files. The
  // model loads headless; the classifier attaches the yes/no head from its tokenizer's ids
  // (tests/classify/sequence_classifier_test.cpp checks its scores against the reference).
  const testing::TempDir tmp;
  const auto dir = write_qwen3(tmp, fixtures::Head::Reranker);
  EXPECT_EQ(llm_rerank_template(families::read_model_config(dir / "config.json"), dir), "qwen3-reranker");
  const auto m = load_encoder_model(dir);
  EXPECT_TRUE(m->scores_with_lm_head);
  EXPECT_FALSE(m->head.has_value());
  EXPECT_EQ(m->kind(), ModelKind::Reranker);
  EXPECT_EQ(m->weight_prefix, "model.");
  // Its ids outside the LM head's rows are a clear error naming the tensor.
  EXPECT_THROW((void)lm_score_head(*m, 1U << 20, 1, active_isa()), Error);
  EXPECT_THROW((void)lm_score_head(*m, 1, 1U << 20, active_isa()), Error);
  const heads::ClassifierHead head = lm_score_head(*m, 3, 4, active_isa());
  EXPECT_EQ(head.labels(), 1U);
  EXPECT_EQ(head.pooling, metadata::PoolingMode::LastToken);
  // An embedding folder is not one.
  const testing::TempDir embed_tmp;
  const auto embed_dir = write_qwen3(embed_tmp);
  EXPECT_EQ(llm_rerank_template(families::read_model_config(embed_dir / "config.json"), embed_dir), "");
  EXPECT_EQ(llm_rerank_template(families::read_model_config(embed_dir / "config.json"), embed_dir,
                                "mxbai-rerank-v2"),
            "");
}

}  // namespace
}  // namespace warden::model

// Qwen2 folders (gte-Qwen2) load as transformers' Qwen2Model used as an encoder: the decoders'
// layers with biases on q/k/v but not on o_proj, no q/k norms, and the attention config.json's
// is_causal asks for; keys and tensors that do not fit are load errors naming them
// (tests/data/goldens/qwen2-none.json checks the arithmetic against the PyTorch reference:
// encoder_golden_test.cpp).

#include <gtest/gtest.h>

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
  return testing::family_with_config(tmp, "qwen2", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

// The last hidden state of the first token of one 12-token input.
std::vector<float> first_token(const EncoderModel& m) {
  std::vector<float> h = testing::hidden_states(m, 12, 40, 7);
  h.resize(m.encoder.dims().hidden);
  return h;
}

TEST(Qwen2, LoadsAsTheCausalLmClassWithBidirectionalAttentionWhenIsCausalIsFalse) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(testing::write_family(tmp, "qwen2", fixtures::Head::None));
  EXPECT_EQ(m->family->name, "qwen2");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  EXPECT_EQ(architecture_name(m->config, m->dir), "Qwen2ForCausalLM");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_FALSE(d.causal);
  EXPECT_FALSE(d.qk_norm);
  EXPECT_EQ(d.kv_heads, 2U);
  EXPECT_EQ(d.head_dim, 16U);  // hidden / heads: Qwen2Config has no head_dim of its own
}

TEST(Qwen2, IsCausalTrueOrAbsentIsCausalAttention) {
  const testing::TempDir bidirectional_dir;
  const auto bidirectional =
      load_encoder_model(testing::write_family(bidirectional_dir, "qwen2", fixtures::Head::None));
  for (const std::string& to : {std::string("\"is_causal\": true"), std::string("\"was_causal\": false")}) {
    SCOPED_TRACE(to);
    const testing::TempDir tmp;
    const auto causal = load_encoder_model(with_config(tmp, "\"is_causal\": false", to));
    EXPECT_TRUE(causal->encoder.dims().causal);
    // The first token sees only itself under the causal mask, the whole input otherwise.
    EXPECT_NE(first_token(*causal), first_token(*bidirectional));
  }
}

TEST(Qwen2, ConfigKeysThatDoNotFitAreNamed) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"use_sliding_window\": false", "\"use_sliding_window\": true"),
                      ErrorKind::CorruptFile, "use_sliding_window");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"is_causal\": false", "\"is_causal\": \"no\""),
                      ErrorKind::CorruptFile, "is_causal");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"),
                      ErrorKind::CorruptFile, "num_key_value_heads");
  }
}

TEST(Qwen2, AMissingLayerIsNamed) {
  const testing::TempDir tmp;
  const auto dir = testing::write_family(tmp, "qwen2", fixtures::Head::None);
  testing::edit_config(dir, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3");
  expect_load_error(dir, ErrorKind::CorruptFile, "layers.2.self_attn.q_proj");
}

}  // namespace
}  // namespace warden::model

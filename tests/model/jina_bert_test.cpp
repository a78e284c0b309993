// JinaBERT folders that do not fit their config are clear load errors naming what is wrong
// (the goldens check the arithmetic: encoder_golden_test.cpp).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/families/family.hpp"
#include "model/family_fixture.hpp"
#include "model/formats/safetensors.hpp"
#include "model/formats/weights.hpp"
#include "model/metadata/config.hpp"
#include "model/temp_dir.hpp"
#include "support/model_load_errors.hpp"

namespace warden::model {
namespace {

std::filesystem::path write_jina(const testing::TempDir& tmp,
                                 fixtures::Head head = fixtures::Head::Reranker) {
  return testing::write_family(tmp, "jina-bert", head);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "jina-bert", fixtures::Head::Reranker, from, to);
}

using testing::expect_load_error;

TEST(JinaBert, LoadsAsTheRemoteCodeClassesAndRunsAlibiWithAGatedFeedForward) {
  const testing::TempDir tmp;
  const auto dir = write_jina(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "jina-bert");
  EXPECT_EQ(m->kind(), ModelKind::Reranker);
  EXPECT_EQ(m->encoder.dims().alibi_slopes.size(), 12U);
  EXPECT_TRUE(m->encoder.dims().gated_ffn);
  EXPECT_FALSE(m->encoder.dims().position_embeddings);
  EXPECT_EQ(m->encoder.dims().max_positions, 8192U);
  EXPECT_EQ(architecture_name(m->config, dir), "JinaBertForSequenceClassification");
  // A config that names no class but says alibi is JinaBertModel (HF's BertModel has no ALiBi).
  metadata::ModelConfig bare = m->config;
  bare.architectures.clear();
  EXPECT_EQ(architecture_name(bare, dir), "JinaBertModel");
}

TEST(JinaBert, AGatedLayerOfTheWrongWidthNamesTheTensor) {
  const testing::TempDir tmp;
  expect_load_error(with_config(tmp, "\"intermediate_size\": 120", "\"intermediate_size\": 128"),
                    ErrorKind::CorruptFile, "mlp.gated_layers.weight");
}

TEST(JinaBert, AnOriginalFeedForwardNeedsBertsLayersAndNamesTheMissingOne) {
  const testing::TempDir tmp;
  expect_load_error(
      with_config(tmp, "\"feed_forward_type\": \"geglu\"", "\"feed_forward_type\": \"original\""),
      ErrorKind::CorruptFile, "intermediate.dense");
}

TEST(JinaBert, WhatIsNotRunIsRefusedByName) {
  {
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "\"feed_forward_type\": \"geglu\"", "\"feed_forward_type\": \"swiglu\""),
        ErrorKind::Unsupported, "feed_forward_type 'swiglu'");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"position_embedding_type\": \"alibi\"",
                                  "\"position_embedding_type\": \"relative_key\""),
                      ErrorKind::Unsupported, "position_embedding_type 'relative_key'");
  }
  {
    // BERT proper has no ALiBi: only the JinaBert classes run it.
    const testing::TempDir tmp;
    expect_load_error(
        with_config(tmp, "\"JinaBertForSequenceClassification\"", "\"BertForSequenceClassification\""),
        ErrorKind::Unsupported, "alibi");
  }
  {
    // The qk-post-norm variant (query/key LayerNorms): refused, naming the tensor.
    const testing::TempDir tmp;
    const auto dir = write_jina(tmp);
    std::vector<std::string> names;
    std::vector<std::vector<std::byte>> blobs;
    std::vector<formats::TensorToWrite> tensors;
    {
      const formats::ModelWeights w = formats::ModelWeights::open_dir(dir);
      for (const std::string_view n : w.names()) {
        const formats::Tensor* t = w.find(n);
        names.emplace_back(n);
        blobs.emplace_back(t->data.begin(), t->data.end());
        tensors.push_back({names.back(), t->dtype, t->shape, {}});
      }
    }
    std::vector<float> ones(96, 1.0F);
    blobs.emplace_back(reinterpret_cast<const std::byte*>(ones.data()),
                       reinterpret_cast<const std::byte*>(ones.data() + ones.size()));
    tensors.push_back(
        {"bert.encoder.layer.0.attention.self.layer_norm_q.weight", formats::Dtype::F32, {96}, {}});
    for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i].data = blobs[i];
    formats::write_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
    expect_load_error(dir, ErrorKind::Unsupported, "layer_norm_q");
  }
}

}  // namespace
}  // namespace warden::model

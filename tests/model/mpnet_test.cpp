// MPNet folders load as the classes the sentence-transformers repos name, and folders that do
// not fit their config are clear load errors naming what is wrong (the goldens check the
// arithmetic, including positions around a literal <pad>: encoder_golden_test.cpp).

#include <gtest/gtest.h>

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

std::filesystem::path write_mpnet(const testing::TempDir& tmp, fixtures::Head head = fixtures::Head::None) {
  return testing::write_family(tmp, "mpnet", head);
}

std::filesystem::path with_config(const testing::TempDir& tmp, const std::string& from,
                                  const std::string& to) {
  return testing::family_with_config(tmp, "mpnet", fixtures::Head::None, from, to);
}

using testing::expect_load_error;

TEST(MPNet, LoadsAsTheMaskedLmClassWithBucketedBiasAndPositionsAfterPadding) {
  const testing::TempDir tmp;
  const auto dir = write_mpnet(tmp);
  const auto m = load_encoder_model(dir);
  EXPECT_EQ(m->family->name, "mpnet");
  EXPECT_EQ(m->kind(), ModelKind::Embedding);
  EXPECT_EQ(architecture_name(m->config, dir), "MPNetForMaskedLM");
  const engine::EncoderDims& d = m->encoder.dims();
  EXPECT_EQ(d.type_vocab, 0U);
  ASSERT_TRUE(d.padding_idx.has_value());
  EXPECT_EQ(*d.padding_idx, 1U);  // fixed in MPNetEmbeddings, whatever pad_token_id says
  EXPECT_EQ(d.position_offset, 2U);
  EXPECT_EQ(d.max_positions, 514U);
  metadata::ModelConfig bare = m->config;
  bare.architectures.clear();
  EXPECT_EQ(architecture_name(bare, dir), "MPNetModel");
}

TEST(MPNet, TheSequenceClassifierHasMPNetsClassificationHead) {
  const testing::TempDir tmp;
  const auto m = load_encoder_model(write_mpnet(tmp, fixtures::Head::Reranker));
  EXPECT_EQ(m->kind(), ModelKind::Reranker);
  EXPECT_EQ(architecture_name(m->config, m->dir), "MPNetForSequenceClassification");
}

TEST(MPNet, FewerThan32BucketsIsACorruptConfigNamingTheField) {
  const testing::TempDir tmp;
  expect_load_error(
      with_config(tmp, "\"relative_attention_num_buckets\": 32", "\"relative_attention_num_buckets\": 16"),
      ErrorKind::CorruptFile, "relative_attention_num_buckets");
}

TEST(MPNet, ABiasTableOfAnotherShapeNamesTheTensor) {
  const testing::TempDir tmp;
  expect_load_error(
      with_config(tmp, "\"relative_attention_num_buckets\": 32", "\"relative_attention_num_buckets\": 64"),
      ErrorKind::CorruptFile, "encoder.relative_attention_bias.weight");
}

TEST(MPNet, MissingLayersAndTooFewPositionsAreNamed) {
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"),
                      ErrorKind::CorruptFile, "encoder.layer.2.attention.attn.q");
  }
  {
    const testing::TempDir tmp;
    expect_load_error(with_config(tmp, "\"max_position_embeddings\": 514", "\"max_position_embeddings\": 2"),
                      ErrorKind::CorruptFile, "max_position_embeddings");
  }
}

}  // namespace
}  // namespace warden::model

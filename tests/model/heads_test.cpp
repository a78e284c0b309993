// The head interface's adapters over the weights the loader reads: each fills only its part of
// the results, per sequence, as the weights' own functions compute it (TokenVectorsHead splits
// bge-m3's rows by sequence, ColbertHead keeps a query's every token and drops a document's
// skiplist tokens, PooledHead leaves a prompt out only when its config says so), and a dense
// span of the wrong size is an internal error rather than a write past it.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "fixtures/parts.hpp"
#include "model/heads/pooled_head.hpp"
#include "model/heads/pooling.hpp"
#include "model/heads/token_vector_heads.hpp"
#include "model/temp_dir.hpp"

namespace warden::model {
namespace {

constexpr std::size_t kHidden = 8;
constexpr std::size_t kOut = 3;

heads::MultiVectorHead projection(const std::filesystem::path& dir) {
  std::vector<float> w(kOut * kHidden);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.5F * static_cast<float>((i * 7) % 11) - 2.0F;
  const auto wb = fixtures::encode_tensor(w, formats::Dtype::F32);
  const auto bb = fixtures::encode_tensor(std::vector<float>{0.5F, -0.25F, 0.0F}, formats::Dtype::F32);
  fixtures::write_torch_checkpoint(
      dir / heads::kMultiVectorHeadFile,
      {{"weight", formats::Dtype::F32, {kOut, kHidden}, wb}, {"bias", formats::Dtype::F32, {kOut}, bb}});
  return *heads::read_multi_vector_head(dir, kHidden, active_isa());
}

struct Pass {
  std::vector<std::uint32_t> ids{1, 5, 7, 5, 1, 5, 9, 2};
  std::vector<std::size_t> offsets{0, 4, 8};
  std::vector<float> hidden = std::vector<float>(8 * kHidden);
  std::vector<std::size_t> prompts{2, 1};
  std::vector<std::uint8_t> queries{1, 0};
  Pass() {
    for (std::size_t i = 0; i < hidden.size(); ++i) hidden[i] = std::cos(static_cast<float>(i) * 0.3F);
  }
  [[nodiscard]] heads::HeadPass view() const {
    heads::HeadPass p;
    p.hidden = hidden;
    p.dim = kHidden;
    p.ids = ids;
    p.offsets = offsets;
    p.prompt_tokens = prompts;
    p.queries = queries;
    return p;
  }
};

TEST(Heads, TokenVectorsAreTheProjectionsRowsSplitBySequence) {
  testing::TempDir dir;
  const heads::MultiVectorHead weights = projection(dir.path());
  const Pass pass;
  std::vector<float> rows;
  weights.vectors(pass.hidden, kHidden, pass.offsets, rows);
  heads::HeadResults out;
  heads::TokenVectorsHead(weights).apply(pass.view(), out);
  ASSERT_EQ(out.multi.size(), 2U);
  EXPECT_TRUE(out.sparse.empty());
  std::size_t row = 0;
  for (const Embeddings& m : out.multi) {
    ASSERT_EQ(m.rows(), 3U);  // four tokens less the first
    ASSERT_EQ(m.dim(), kOut);
    for (std::size_t r = 0; r < m.rows(); ++r, ++row) {
      for (std::size_t k = 0; k < kOut; ++k) EXPECT_EQ(m.row(r)[k], rows[row * kOut + k]);
    }
  }
}

TEST(Heads, ColbertKeepsAQuerysEveryTokenAndDropsADocumentsSkiplist) {
  testing::TempDir dir;
  heads::MultiVectorHead weights = projection(dir.path());
  weights.skip_front = 0;  // a ColBERT's projection keeps every token
  const Pass pass;
  std::vector<float> rows;
  weights.vectors(pass.hidden, kHidden, pass.offsets, rows);
  heads::HeadResults out;
  heads::ColbertHead(weights, {5}).apply(pass.view(), out);
  ASSERT_EQ(out.multi.size(), 2U);
  ASSERT_EQ(out.multi[0].rows(), 4U);  // the query: 1 5 7 5, all kept
  for (std::size_t t = 0; t < 4; ++t) EXPECT_EQ(out.multi[0].row(t)[0], rows[t * kOut]);
  ASSERT_EQ(out.multi[1].rows(), 3U);  // the document: 1 5 9 2 without the 5
  const std::size_t kept[] = {4, 6, 7};
  for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(out.multi[1].row(r)[1], rows[kept[r] * kOut + 1]);
}

TEST(Heads, PooledHeadLeavesThePromptOutOnlyWhenItsConfigSaysSo) {
  const Pass pass;
  for (const bool include_prompt : {true, false}) {
    metadata::PoolingConfig config;
    config.mode = metadata::PoolingMode::Mean;
    config.include_prompt = include_prompt;
    std::vector<float> got(2 * kHidden);
    heads::HeadResults out;
    out.dense = got;
    heads::PooledHead(config, kHidden).apply(pass.view(), out);
    std::vector<float> want(2 * kHidden);
    heads::pool(pass.hidden, kHidden, pass.offsets, metadata::PoolingMode::Mean, want,
                include_prompt ? std::span<const std::size_t>() : std::span<const std::size_t>(pass.prompts));
    EXPECT_EQ(got, want) << "include_prompt " << include_prompt;
  }
  metadata::PoolingConfig config;
  std::vector<float> short_of_a_row(2 * kHidden - 1);
  heads::HeadResults out;
  out.dense = short_of_a_row;
  try {
    heads::PooledHead(config, kHidden).apply(pass.view(), out);
    FAIL() << "a short span was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
  }
}

}  // namespace
}  // namespace warden::model

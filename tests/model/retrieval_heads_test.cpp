// bge-m3's heads against a double-precision reading of FlagEmbedding's rules, on hand-made
// state dicts in torch.save's format: the sparse vector (the largest ReLU weight per id, the
// skipped ids and zero weights left out, ids ascending) and the multi-vector rows (every token
// after the first, projected, unit length); and head files of the wrong shape refused by name.

#include "model/heads/retrieval_heads.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "fixtures/parts.hpp"
#include "model/temp_dir.hpp"

namespace warden::model {
namespace {

constexpr std::size_t kHidden = 8;

// torch.save of an nn.Linear(in, out)'s state dict, float32.
void write_linear(const std::filesystem::path& path, const std::vector<float>& weight, std::size_t out,
                  std::size_t in, const std::vector<float>& bias) {
  const auto w = fixtures::encode_tensor(weight, formats::Dtype::F32);
  const auto b = fixtures::encode_tensor(bias, formats::Dtype::F32);
  fixtures::write_torch_checkpoint(
      path, {{"weight", formats::Dtype::F32, {out, in}, w}, {"bias", formats::Dtype::F32, {out}, b}});
}

std::vector<float> ramp(std::size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 11) - offset;
  return v;
}

TEST(RetrievalHeads, SparseKeepsTheLargestPositiveWeightPerIdOutsideTheSkippedOnes) {
  testing::TempDir dir;
  const std::vector<float> w = ramp(kHidden, 0.25F, 1.0F);
  write_linear(dir / heads::kLexicalHeadFile, w, 1, kHidden, {0.125F});
  const auto head = heads::read_lexical_head(dir.path(), kHidden, active_isa());
  ASSERT_TRUE(head);
  EXPECT_FALSE(heads::read_multi_vector_head(dir.path(), kHidden, active_isa()));  // no file: no head

  // Two sequences: ids repeat inside the first, 0 and 2 are skipped (cls, eos).
  const std::vector<std::uint32_t> ids{0, 5, 9, 5, 7, 2, 0, 9, 9, 2};
  const std::vector<std::size_t> offsets{0, 6, 10};
  std::vector<float> hidden(ids.size() * kHidden);
  for (std::size_t i = 0; i < hidden.size(); ++i) hidden[i] = std::sin(static_cast<float>(i) * 0.7F);
  const std::vector<std::uint32_t> skip{0, 2};
  const auto got = head->sparse(hidden, kHidden, ids, offsets, skip);
  ASSERT_EQ(got.size(), 2U);
  for (std::size_t s = 0; s < 2; ++s) {
    std::map<std::uint32_t, double> want;
    for (std::size_t t = offsets[s]; t < offsets[s + 1]; ++t) {
      double x = 0.125;
      for (std::size_t k = 0; k < kHidden; ++k) x += double(w[k]) * double(hidden[t * kHidden + k]);
      x = std::max(x, 0.0);
      if (ids[t] == 0 || ids[t] == 2 || x <= 0) continue;
      want[ids[t]] = std::max(want[ids[t]], x);
    }
    ASSERT_EQ(got[s].size(), want.size()) << "sequence " << s;
    std::size_t k = 0;
    for (const auto& [id, x] : want) {
      EXPECT_EQ(got[s].indices[k], id);
      EXPECT_NEAR(got[s].values[k], x, 1e-5);
      EXPECT_GT(got[s].values[k], 0.0F);
      ++k;
    }
  }
}

TEST(RetrievalHeads, MultiVectorsAreUnitRowsOfEveryTokenButTheFirst) {
  testing::TempDir dir;
  constexpr std::size_t kOut = 3;
  const std::vector<float> w = ramp(kOut * kHidden, 0.5F, 2.0F);
  const std::vector<float> b{0.5F, -0.25F, 0.0F};
  write_linear(dir / heads::kMultiVectorHeadFile, w, kOut, kHidden, b);
  const auto head = heads::read_multi_vector_head(dir.path(), kHidden, active_isa());
  ASSERT_TRUE(head);
  EXPECT_EQ(head->dim(), kOut);
  const std::vector<std::size_t> offsets{0, 4, 5, 8};  // the middle sequence has one token: no rows
  std::vector<float> hidden(8 * kHidden);
  for (std::size_t i = 0; i < hidden.size(); ++i) hidden[i] = std::cos(static_cast<float>(i) * 0.3F);
  std::vector<float> got;
  head->vectors(hidden, kHidden, offsets, got);
  ASSERT_EQ(got.size(), (3 + 0 + 2) * kOut);
  std::size_t row = 0;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    for (std::size_t t = offsets[s] + 1; t < offsets[s + 1]; ++t, ++row) {
      double y[kOut];
      double norm = 0;
      for (std::size_t o = 0; o < kOut; ++o) {
        y[o] = double(b[o]);
        for (std::size_t k = 0; k < kHidden; ++k)
          y[o] += double(w[o * kHidden + k]) * double(hidden[t * kHidden + k]);
        norm += y[o] * y[o];
      }
      for (std::size_t o = 0; o < kOut; ++o) EXPECT_NEAR(got[row * kOut + o], y[o] / std::sqrt(norm), 1e-5);
    }
  }
}

TEST(RetrievalHeads, HeadsOfTheWrongShapeAreRefusedNamingTheirFile) {
  testing::TempDir dir;
  write_linear(dir / heads::kLexicalHeadFile, ramp(2 * kHidden, 1, 0), 2, kHidden, {0, 0});  // Linear(h, 2)
  try {
    (void)heads::read_lexical_head(dir.path(), kHidden, active_isa());
    FAIL() << "a Linear(hidden, 2) loaded as the lexical head";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find(heads::kLexicalHeadFile), std::string::npos) << e.what();
  }
  write_linear(dir / heads::kMultiVectorHeadFile, ramp(4 * 6, 1, 0), 4, 6, {0, 0, 0, 0});  // reads 6, not 8
  try {
    (void)heads::read_multi_vector_head(dir.path(), kHidden, active_isa());
    FAIL() << "a Linear(6, 4) loaded over an 8-wide encoder";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile);
    EXPECT_NE(std::string(e.what()).find(heads::kMultiVectorHeadFile), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warden::model

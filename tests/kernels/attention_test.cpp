#include "kernels/attention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace warden::kernels {
namespace {

using HeadFn = void (*)(const float*, const float*, const float*, std::size_t, std::size_t, std::size_t,
                        float, float*, std::size_t, float*, const detail::ScoreBias*);

std::vector<HeadFn> head_fns() {
  std::vector<HeadFn> fns{detail::attend_head_portable};
#if defined(__x86_64__)
  if (cpu_features().avx2_fma) fns.push_back(detail::attend_head_avx2);
  if (cpu_features().avx512) fns.push_back(detail::attend_head_avx512);
#endif
#if defined(__aarch64__)
  if (cpu_features().neon) fns.push_back(detail::attend_head_neon);
#endif
  return fns;
}

// Double-precision attention for one head, rows of stride ld, with the bias's terms when given.
std::vector<double> reference(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                              std::size_t dim, double scale, const detail::ScoreBias* bias = nullptr) {
  std::vector<double> out(len * dim, 0.0);
  for (std::size_t i = 0; i < len; ++i) {
    std::vector<double> s(len);
    double mx = -1e300;
    for (std::size_t j = 0; j < len; ++j) {
      double dot = 0;
      for (std::size_t d = 0; d < dim; ++d) dot += double(q[i * ld + d]) * double(k[j * ld + d]);
      if (bias != nullptr && bias->by_distance != nullptr) {
        // added after the scaling below
        dot += double(bias->by_distance[static_cast<std::ptrdiff_t>(j) - static_cast<std::ptrdiff_t>(i)]) /
               scale;
      }
      if (bias != nullptr && bias->rows_at_zero != nullptr) {
        const auto w = static_cast<std::size_t>(
            bias->rows_at_zero[static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(j)]);
        dot += double(bias->c2p[i * bias->width + w]) + double(bias->p2c[j * bias->width + w]);
      }
      s[j] = dot * scale;
      const std::size_t gap = i > j ? i - j : j - i;
      if (bias != nullptr && bias->window > 0 && gap > bias->window) s[j] = -INFINITY;
      if (bias != nullptr && bias->keys > 0 && j >= bias->keys) s[j] = -INFINITY;
      if (bias != nullptr && bias->causal && j > i) s[j] = -INFINITY;
      mx = std::max(mx, s[j]);
    }
    double sum = 0;
    for (auto& x : s) sum += (x = std::exp(x - mx));
    for (std::size_t j = 0; j < len; ++j) {
      for (std::size_t d = 0; d < dim; ++d) out[i * dim + d] += s[j] / sum * double(v[j * ld + d]);
    }
  }
  return out;
}

TEST(Attention, EachHeadKernelMatchesADoubleReference) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0F, 1.5F);
  for (const HeadFn fn : head_fns()) {
    for (const std::size_t dim : {16U, 24U, 32U, 64U, 80U}) {
      for (const std::size_t len : {1U, 7U, 16U, 17U, 63U, 64U, 130U, 1020U}) {
        const std::size_t ld = 3 * dim + 5;
        std::vector<float> qkv(len * ld);
        for (auto& x : qkv) x = dist(rng);
        std::vector<float> out(len * dim), scratch(detail::attention_scratch_floats(dim, len));
        const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
        fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
           scratch.data(), nullptr);
        const auto want =
            reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, double(scale));
        for (std::size_t i = 0; i < out.size(); ++i) {
          ASSERT_NEAR(out[i], want[i], 2e-5) << "dim " << dim << " len " << len << " at " << i;
        }
        // With DeBERTa's relative terms: distance r reads row clamp(r + 5, 0, 9) of c2p / p2c.
        const std::size_t width = 10;
        std::vector<float> c2p(len * width), p2c(len * width);
        for (auto& x : c2p) x = dist(rng);
        for (auto& x : p2c) x = dist(rng);
        std::vector<std::int32_t> rows;
        for (std::ptrdiff_t r = -static_cast<std::ptrdiff_t>(len); r <= static_cast<std::ptrdiff_t>(len);
             ++r) {
          rows.push_back(static_cast<std::int32_t>(std::clamp<std::ptrdiff_t>(r + 5, 0, 9)));
        }
        detail::ScoreBias bias;
        bias.c2p = c2p.data();
        bias.p2c = p2c.data();
        bias.width = width;
        bias.rows_at_zero = rows.data() + len;
        bias.scale = scale;
        fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
           scratch.data(), &bias);
        const auto biased =
            reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, double(scale), &bias);
        for (std::size_t i = 0; i < out.size(); ++i) {
          ASSERT_NEAR(out[i], biased[i], 2e-5) << "biased: dim " << dim << " len " << len << " at " << i;
        }
      }
    }
  }
}

// The bf16-product kernel against the double reference: within bf16's error (operands
// rounded to 8 significant bits, sums in float32) for every head size and length, with
// windows, a distance bias, hidden keys and the causal mask as the float32 kernels take them.
TEST(Attention, Bf16ProductsStayWithinBf16ErrorOfTheReference) {
#if defined(__x86_64__)
  if (!cpu_features().avx512 || !cpu_features().avx512_bf16) GTEST_SKIP() << "CPU lacks AVX-512 BF16";
  std::mt19937 rng(23);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  const std::vector<float> slope{0.25F};
  double worst = 0.0;
  for (const std::size_t dim : {16U, 24U, 32U, 64U, 80U, 7U}) {
    for (const std::size_t len : {1U, 7U, 16U, 17U, 63U, 130U, 1020U}) {
      const std::size_t ld = 3 * dim + 5;
      std::vector<float> qkv(len * ld);
      for (auto& x : qkv) x = dist(rng);
      std::vector<float> out(len * dim), scratch(detail::attention_scratch_floats(dim, len));
      const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
      const DistanceBias alibi = DistanceBias::alibi(slope, len);
      for (int variant = 0; variant < 5; ++variant) {
        detail::ScoreBias bias;
        if (variant == 1) bias.window = 5;
        if (variant == 2) bias.by_distance = alibi.at_zero(0);
        if (variant == 3) bias.keys = len > 2 ? len / 2 + 1 : 0;
        if (variant == 4) bias.causal = len > 1;
        const detail::ScoreBias* b = variant == 0 ? nullptr : &bias;
        std::fill(out.begin(), out.end(), -1.0F);
        detail::attend_head_avx512_bf16(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim,
                                        scale, out.data(), dim, scratch.data(), b);
        const auto want =
            reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, double(scale), b);
        for (std::size_t i = 0; i < out.size(); ++i) {
          const double err = std::fabs(static_cast<double>(out[i]) - want[i]);
          worst = std::max(worst, err);
          ASSERT_LT(err, 0.03) << "dim " << dim << " len " << len << " variant " << variant << " at " << i;
        }
      }
    }
  }
  EXPECT_GT(worst, 0.0);  // the products are rounded: not the float32 kernel's numbers
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}

TEST(Attention, SlidingWindowsMatchAMaskedReferenceInEveryKernel) {
  std::mt19937 rng(17);
  std::normal_distribution<float> dist(0.0F, 1.5F);
  for (const HeadFn fn : head_fns()) {
    for (const std::size_t dim : {16U, 20U, 64U}) {
      for (const std::size_t len : {2U, 9U, 33U, 100U, 300U}) {
        for (const std::size_t window : {1U, 3U, 16U, 17U, 64U}) {
          const std::size_t ld = 3 * dim + 3;
          std::vector<float> qkv(len * ld);
          for (auto& x : qkv) x = dist(rng);
          std::vector<float> out(len * dim), scratch(detail::attention_scratch_floats(dim, len));
          const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
          detail::ScoreBias bias;
          bias.window = window;
          fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
             scratch.data(), &bias);
          const auto want = reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim,
                                      double(scale), &bias);
          for (std::size_t i = 0; i < out.size(); ++i) {
            ASSERT_NEAR(out[i], want[i], 2e-5)
                << "dim " << dim << " len " << len << " window " << window << " at " << i;
          }
          // With a distance bias as well: both apply.
          const std::vector<float> slope{0.25F};
          const DistanceBias alibi = DistanceBias::alibi(slope, len);
          bias.by_distance = alibi.at_zero(0);
          fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
             scratch.data(), &bias);
          const auto both = reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim,
                                      double(scale), &bias);
          for (std::size_t i = 0; i < out.size(); ++i) {
            ASSERT_NEAR(out[i], both[i], 2e-5)
                << "biased: dim " << dim << " len " << len << " window " << window << " at " << i;
          }
        }
      }
    }
  }
}

// ColBERT's query expansion: every row attends to the first `keys` tokens only (the [MASK]
// padding attends to the text, the text not to the padding), alone and with a window.
TEST(Attention, VisibleKeysMatchAMaskedReferenceInEveryKernel) {
  std::mt19937 rng(23);
  std::normal_distribution<float> dist(0.0F, 1.5F);
  for (const HeadFn fn : head_fns()) {
    for (const std::size_t dim : {16U, 24U, 64U}) {
      for (const std::size_t len : {2U, 7U, 32U, 33U, 100U}) {
        for (const std::size_t keys : {std::size_t{1}, len / 2 + 1, len - 1}) {
          if (keys == 0 || keys >= len) continue;
          for (const std::size_t window : {0U, 64U}) {
            if (window > 0 && len - 1 > keys - 1 + window) continue;  // attention() refuses these
            const std::size_t ld = 3 * dim + 1;
            std::vector<float> qkv(len * ld);
            for (auto& x : qkv) x = dist(rng);
            std::vector<float> out(len * dim), scratch(detail::attention_scratch_floats(dim, len));
            const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
            detail::ScoreBias bias;
            bias.keys = keys;
            bias.window = window;
            fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
               scratch.data(), &bias);
            const auto want = reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim,
                                        double(scale), &bias);
            for (std::size_t i = 0; i < out.size(); ++i) {
              ASSERT_NEAR(out[i], want[i], 2e-5) << "dim " << dim << " len " << len << " keys " << keys
                                                 << " window " << window << " at " << i;
            }
          }
        }
      }
    }
  }
}

TEST(Attention, VisibleKeysArePerSequenceAndChecked) {
  std::mt19937 rng(29);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  const std::size_t heads = 2, dim = 16, ld = 3 * heads * dim;
  const std::vector<std::size_t> offsets{0, 9, 20};
  std::vector<float> qkv(20 * ld);
  for (auto& x : qkv) x = dist(rng);
  const AttentionShape shape{heads, dim, 0.25F};
  std::vector<float> limited(20 * heads * dim), alone(9 * heads * dim);
  const std::vector<std::size_t> visible{5, 0};
  attention(qkv.data(), ld, offsets, shape, limited.data(), heads * dim, nullptr, {}, 0, visible);
  // The first 5 tokens of sequence 0 attend as the 5-token sequence they would be alone.
  const std::vector<std::size_t> first5{0, 5};
  attention(qkv.data(), ld, first5, shape, alone.data(), heads * dim);
  for (std::size_t i = 0; i < 5 * heads * dim; ++i) EXPECT_NEAR(limited[i], alone[i], 1e-6);
  // Sequence 1 (0: all keys) is as without limits.
  std::vector<float> plain(20 * heads * dim);
  attention(qkv.data(), ld, offsets, shape, plain.data(), heads * dim);
  for (std::size_t i = 9 * heads * dim; i < plain.size(); ++i) EXPECT_EQ(limited[i], plain[i]);
  const std::vector<std::size_t> wrong{5};
  EXPECT_THROW(attention(qkv.data(), ld, offsets, shape, limited.data(), heads * dim, nullptr, {}, 0, wrong),
               Error);
}

TEST(Attention, BlockKeysCoverEveryRowsWindowAndNoMore) {
  detail::ScoreBias bias;
  bias.window = 64;
  // Rows 100..103 see keys 36..167; the first is rounded down to 32.
  const detail::KeyRange r = detail::block_keys(&bias, 100, 4, 1000, 16);
  EXPECT_EQ(r.first, 32U);
  EXPECT_EQ(r.first + r.count, 168U);
  const detail::KeyRange end = detail::block_keys(&bias, 990, 4, 1000, 16);  // clipped at the end
  EXPECT_EQ(end.first + end.count, 1000U);
  const detail::KeyRange all = detail::block_keys(nullptr, 100, 4, 1000, 16);
  EXPECT_EQ(all.first, 0U);
  EXPECT_EQ(all.count, 1000U);
}

TEST(Attention, WindowedSequencesMatchAloneAndAWindowAsLongAsTheSequenceMasksNothing) {
  const AttentionShape shape{2, 16, 0.25F};
  const std::size_t cols = shape.heads * shape.head_dim;
  const std::vector<std::size_t> offsets{0, 5, 90, 91, 300};
  const std::size_t tokens = offsets.back();
  std::mt19937 rng(19);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> qkv(tokens * 3 * cols);
  for (auto& x : qkv) x = dist(rng);
  std::vector<float> windowed(tokens * cols), full(tokens * cols), wide(tokens * cols);
  ThreadPool pool(2);
  attention(qkv.data(), 3 * cols, offsets, shape, windowed.data(), cols, &pool, {}, 8);
  attention(qkv.data(), 3 * cols, offsets, shape, full.data(), cols, &pool);
  attention(qkv.data(), 3 * cols, offsets, shape, wide.data(), cols, &pool, {}, 299);
  EXPECT_EQ(wide, full);
  EXPECT_NE(windowed, full);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t len = offsets[s + 1] - offsets[s];
    const std::vector<std::size_t> alone{0, len};
    std::vector<float> single(len * cols);
    attention(qkv.data() + offsets[s] * 3 * cols, 3 * cols, alone, shape, single.data(), cols, nullptr, {},
              8);
    for (std::size_t i = 0; i < single.size(); ++i) ASSERT_EQ(single[i], windowed[offsets[s] * cols + i]);
  }
}

TEST(Attention, CausalMaskMatchesADoubleReferenceInEveryKernel) {
  std::mt19937 rng(17);
  std::normal_distribution<float> dist(0.0F, 1.5F);
  for (const HeadFn fn : head_fns()) {
    for (const std::size_t dim : {16U, 64U, 128U}) {
      for (const std::size_t len : {1U, 2U, 7U, 16U, 17U, 130U}) {
        const std::size_t ld = 3 * dim;
        std::vector<float> qkv(len * ld);
        for (auto& x : qkv) x = dist(rng);
        const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
        std::vector<float> out(len * dim), scratch(detail::attention_scratch_floats(dim, len));
        detail::ScoreBias bias;
        bias.causal = true;
        fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
           scratch.data(), &bias);
        const auto want =
            reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, double(scale), &bias);
        for (std::size_t i = 0; i < out.size(); ++i) {
          ASSERT_NEAR(out[i], want[i], 2e-5) << "dim " << dim << " len " << len << " at " << i;
        }
      }
    }
  }
}

// Grouped-query, causal attention over packed sequences (a Qwen3 layer's): query head h reads
// kv head h / 2 of 2 (repeat_kv's order), each token only itself and the tokens before it in its
// own sequence; the same as each head computed alone by the reference.
TEST(Attention, GroupedQueryHeadsShareTheirKvHeadCausally) {
  const AttentionShape shape{4, 16, 0.25F, 2, true};
  const std::size_t q_cols = 4 * 16;
  const std::size_t kv_cols = 2 * 16;
  const std::size_t ld = q_cols + 2 * kv_cols;
  const std::vector<std::size_t> offsets{0, 1, 9, 40};
  std::mt19937 rng(19);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> qkv(offsets.back() * ld);
  for (auto& x : qkv) x = dist(rng);
  std::vector<float> ctx(offsets.back() * q_cols);
  ThreadPool pool(2);
  attention(qkv.data(), ld, offsets, shape, ctx.data(), q_cols, &pool);
  detail::ScoreBias causal;
  causal.causal = true;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const float* rows = qkv.data() + offsets[s] * ld;
    const std::size_t len = offsets[s + 1] - offsets[s];
    for (std::size_t h = 0; h < 4; ++h) {
      const float* k = rows + q_cols + (h / 2) * 16;
      const auto want = reference(rows + h * 16, k, k + kv_cols, ld, len, 16, 0.25, &causal);
      for (std::size_t t = 0; t < len; ++t) {
        for (std::size_t d = 0; d < 16; ++d) {
          ASSERT_NEAR(ctx[(offsets[s] + t) * q_cols + h * 16 + d], want[t * 16 + d], 2e-5)
              << "sequence " << s << " head " << h << " token " << t;
        }
      }
    }
  }
  const AttentionShape uneven{3, 16, 0.25F, 2, true};
  EXPECT_THROW(attention(qkv.data(), ld, offsets, uneven, ctx.data(), q_cols), Error);
}

TEST(Attention, PackedSequencesAttendOnlyWithinThemselves) {
  const AttentionShape shape{3, 8, 1.0F / std::sqrt(8.0F)};
  const std::size_t cols = shape.heads * shape.head_dim;
  const std::vector<std::size_t> offsets{0, 5, 6, 19};
  const std::size_t tokens = offsets.back();
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> qkv(tokens * 3 * cols);
  for (auto& x : qkv) x = dist(rng);
  std::vector<float> packed(tokens * cols);
  ThreadPool pool(2);
  attention(qkv.data(), 3 * cols, offsets, shape, packed.data(), cols, &pool);
  // Each sequence alone must give the same rows.
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t len = offsets[s + 1] - offsets[s];
    const std::vector<std::size_t> alone{0, len};
    std::vector<float> single(len * cols);
    attention(qkv.data() + offsets[s] * 3 * cols, 3 * cols, alone, shape, single.data(), cols);
    for (std::size_t i = 0; i < single.size(); ++i) ASSERT_EQ(single[i], packed[offsets[s] * cols + i]);
  }
}

TEST(Attention, AlibiSlopesAreTheReferenceSequence) {
  // _get_alibi_head_slopes: 2^-1 ... 2^-8 for 8 heads; for 12 the same eight, then 2^-0.5,
  // 2^-1.5, 2^-2.5, 2^-3.5 appended (every other slope of the 16-head sequence).
  const std::vector<float> eight = alibi_slopes(8);
  ASSERT_EQ(eight.size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(eight[i], std::ldexp(1.0F, -static_cast<int>(i + 1)));
  const std::vector<float> twelve = alibi_slopes(12);
  ASSERT_EQ(twelve.size(), 12U);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(twelve[i], eight[i]);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(twelve[8 + i], static_cast<float>(std::pow(2.0, -0.5 - static_cast<double>(i))));
  }
  const std::vector<float> six = alibi_slopes(6);  // 2^-2, 2^-4, 2^-6, 2^-8, then 2^-1, 2^-3
  const std::vector<float> want{0.25F, 0.0625F, 0.015625F, 0.00390625F, 0.5F, 0.125F};
  EXPECT_EQ(six, want);
  EXPECT_EQ(alibi_slopes(1), std::vector<float>{0.00390625F});  // n = 1: 2^-8
}

TEST(Attention, AlibiBiasMatchesADoubleReferenceInEveryKernel) {
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  for (const HeadFn fn : head_fns()) {
    for (const std::size_t dim : {8U, 32U, 64U}) {
      for (const std::size_t len : {1U, 3U, 17U, 70U}) {
        const std::size_t ld = 3 * dim;
        std::vector<float> qkv(len * ld);
        for (auto& x : qkv) x = dist(rng);
        const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
        std::vector<float> out(len * dim), scratch(detail::attention_scratch_floats(dim, len));
        const std::vector<float> slope{0.5F};
        const DistanceBias alibi = DistanceBias::alibi(slope, len);
        detail::ScoreBias bias;
        bias.by_distance = alibi.at_zero(0);
        fn(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, scale, out.data(), dim,
           scratch.data(), &bias);
        const auto want =
            reference(qkv.data(), qkv.data() + dim, qkv.data() + 2 * dim, ld, len, dim, double(scale), &bias);
        for (std::size_t i = 0; i < out.size(); ++i) {
          ASSERT_NEAR(out[i], want[i], 2e-5) << "dim " << dim << " len " << len << " at " << i;
        }
      }
    }
  }
}

TEST(Attention, AlibiSequencesCountPositionsFromTheirOwnStart) {
  const AttentionShape shape{3, 8, 1.0F / std::sqrt(8.0F)};
  const std::size_t cols = shape.heads * shape.head_dim;
  const std::vector<std::size_t> offsets{0, 5, 6, 40};
  const std::size_t tokens = offsets.back();
  std::mt19937 rng(13);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> qkv(tokens * 3 * cols);
  for (auto& x : qkv) x = dist(rng);
  const DistanceBias slopes = DistanceBias::alibi(alibi_slopes(shape.heads), 40);
  std::vector<float> packed(tokens * cols), plain(tokens * cols);
  ThreadPool pool(2);
  attention(qkv.data(), 3 * cols, offsets, shape, packed.data(), cols, &pool, slopes);
  attention(qkv.data(), 3 * cols, offsets, shape, plain.data(), cols, &pool);
  EXPECT_NE(packed, plain);  // the bias changes the result
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t len = offsets[s + 1] - offsets[s];
    const std::vector<std::size_t> alone{0, len};
    std::vector<float> single(len * cols);
    attention(qkv.data() + offsets[s] * 3 * cols, 3 * cols, alone, shape, single.data(), cols, nullptr,
              slopes);
    for (std::size_t i = 0; i < single.size(); ++i) ASSERT_EQ(single[i], packed[offsets[s] * cols + i]);
  }
  const DistanceBias wrong_heads = DistanceBias::alibi(std::vector<float>(2, 0.5F), 40);
  EXPECT_THROW(attention(qkv.data(), 3 * cols, offsets, shape, packed.data(), cols, &pool, wrong_heads),
               Error);
  const DistanceBias too_short = DistanceBias::alibi(alibi_slopes(shape.heads), 20);  // 34 tokens > 21
  EXPECT_THROW(attention(qkv.data(), 3 * cols, offsets, shape, packed.data(), cols, &pool, too_short), Error);
  // The table holds -slope·|r| exactly as the reference's float product.
  EXPECT_EQ(slopes.at_zero(0)[-7], -alibi_slopes(shape.heads)[0] * 7.0F);
  EXPECT_EQ(slopes.at_zero(2)[5], -alibi_slopes(shape.heads)[2] * 5.0F);
}

}  // namespace
}  // namespace warden::kernels

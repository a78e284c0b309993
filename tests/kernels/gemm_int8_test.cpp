#include "kernels/gemm_int8.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm.hpp"

namespace warden::kernels {
namespace {

std::vector<float> normal_vector(std::size_t n, std::mt19937& rng, float stddev = 1.0F) {
  std::normal_distribution<float> dist(0.0F, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool has_vnni() {
  return cpu_features().avx512 && cpu_features().avx512_vnni;
}

// Runs linear_int8 with strides wider than the rows and returns C as m x n.
std::vector<float> run_int8(const QuantizedLinear& w, const std::vector<float>& a, std::size_t lda,
                            std::size_t m, const Epilogue& ep, std::size_t ldc, ThreadPool* pool) {
  std::vector<float> c(m * ldc, 12345.0F);
  linear_int8(a.data(), lda, m, w, c.data(), ldc, ep, pool);
  std::vector<float> out(m * w.n());
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < w.n(); ++j) out[i * w.n() + j] = c[i * ldc + j];
  }
  return out;
}

// A whole layer on `isa`'s tile against the portable one, over every shape given, with and
// without an activation and a residual, threaded for half the row counts: exact, since every
// tile sums the same int8 products in int32 and all share the quantiser and the epilogue.
void expect_layer_equals_portable(Isa isa, Int8Kernel kernel, std::initializer_list<std::size_t> ms,
                                  std::initializer_list<std::size_t> ns,
                                  std::initializer_list<std::size_t> ks) {
  ThreadPool pool(2);
  for (const std::size_t m : ms) {
    for (const std::size_t n : ns) {
      for (const std::size_t k : ks) {
        std::mt19937 rng(static_cast<unsigned>(m * 1000 + n * 10 + k));
        const std::size_t lda = k + 3;
        const std::size_t ldc = n + 5;
        const auto a = normal_vector(m * lda, rng);
        const auto wt = normal_vector(n * k, rng, 0.1F);
        const auto bias = normal_vector(n, rng);
        const auto res = normal_vector(m * ldc, rng);
        const QuantizedLinear portable(wt, n, k, bias, Isa::Portable);
        const QuantizedLinear layer(wt, n, k, bias, isa);
        ASSERT_EQ(portable.kernel(), Int8Kernel::Portable);
        ASSERT_EQ(layer.kernel(), kernel);
        for (const Activation act : {Activation::None, Activation::Gelu, Activation::Tanh}) {
          const Epilogue ep{act, act == Activation::None ? nullptr : res.data(), ldc};
          const auto expected = run_int8(portable, a, lda, m, ep, ldc, nullptr);
          const auto got = run_int8(layer, a, lda, m, ep, ldc, m % 2 == 0 ? &pool : nullptr);
          ASSERT_EQ(std::memcmp(expected.data(), got.data(), expected.size() * sizeof(float)), 0)
              << isa_name(isa) << " m=" << m << " n=" << n << " k=" << k << " act=" << static_cast<int>(act);
        }
      }
    }
  }
}

TEST(GemmInt8Test, VnniEqualsPortableExactly) {
  if (!has_vnni()) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  expect_layer_equals_portable(Isa::Avx512, Int8Kernel::Avx512Vnni, {1, 3, 17, 18}, {1, 15, 33, 384},
                               {1, 7, 64, 100, 384});
}

TEST(GemmInt8Test, Avx2LayerEqualsPortableExactly) {
  if (!cpu_features().avx2_fma) GTEST_SKIP() << "CPU lacks AVX2";
  expect_layer_equals_portable(Isa::Avx2, Int8Kernel::Avx2, {1, 5, 6, 7, 29, 30}, {1, 15, 33, 384},
                               {1, 7, 64, 100, 385});
}

// Row counts around the AMX tile's 16- and 32-row groups and its 64-row blocks; depths that are
// and are not multiples of 64.
TEST(GemmInt8Test, AmxLayerEqualsPortableExactly) {
  if (!cpu_features().amx_int8) GTEST_SKIP() << "no AMX int8 tiles for this process";
  expect_layer_equals_portable(Isa::Amx, Int8Kernel::Amx, {1, 15, 16, 17, 31, 32, 33, 64, 65, 130},
                               {1, 31, 33, 384}, {1, 63, 64, 100, 384});
}

// Which tile a layer runs: VNNI only for Avx512 on a CPU with it; Avx512 without VNNI and
// Avx2 run the AVX2 tile; an ISA the CPU lacks falls back.
TEST(GemmInt8Test, KernelDispatch) {
  const std::vector<float> wt(8, 0.5F);
  const CpuFeatures& cpu = cpu_features();
  EXPECT_EQ(QuantizedLinear(wt, 2, 4, {}, Isa::Portable).kernel(), Int8Kernel::Portable);
  EXPECT_EQ(QuantizedLinear(wt, 2, 4, {}, Isa::Neon).kernel(), Int8Kernel::Portable);
  EXPECT_EQ(QuantizedLinear(wt, 2, 4, {}, Isa::Avx2).kernel(),
            cpu.avx2_fma ? Int8Kernel::Avx2 : Int8Kernel::Portable);
  const QuantizedLinear wide(wt, 2, 4, {}, Isa::Avx512);
  EXPECT_EQ(wide.kernel(), !cpu.avx512       ? Int8Kernel::Portable
                           : cpu.avx512_vnni ? Int8Kernel::Avx512Vnni
                                             : Int8Kernel::Avx2);
  EXPECT_EQ(wide.uses_vnni(), wide.kernel() == Int8Kernel::Avx512Vnni);
  EXPECT_EQ(wide.k_padded(), 4U);
  const QuantizedLinear tiles(wt, 2, 4, {}, Isa::Amx);
  EXPECT_EQ(tiles.kernel(), cpu.amx_int8 ? Int8Kernel::Amx : wide.kernel());
  EXPECT_EQ(tiles.k_padded(), cpu.amx_int8 ? 64U : 4U);
}

#if defined(__x86_64__)
using TileFn = void (*)(const std::int8_t*, std::size_t, std::size_t, const std::int8_t*, std::size_t,
                        const std::int32_t*, std::int32_t*);

// One SIMD tile alone against the portable one: every row count up to max_rows, depths from
// one 4-step to past 1536, a row stride that is not a multiple of 4, values up to the ±127
// extremes (row 0 all +127 against column 3 all -127 and column 30 all +127, the last row
// alternating: the largest sums), and rows past `rows` untouched. offset: the tile takes its
// rows offset by 128, as linear_int8 gives them to the VNNI tile.
void expect_tile_equals_portable(TileFn tile, std::size_t max_rows, bool offset, unsigned seed) {
  constexpr std::size_t kNr = detail::kInt8PanelWidth;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> any(-127, 127);
  for (const std::size_t kp : {4, 8, 12, 36, 100, 388, 1028, 1540}) {
    const std::size_t lda = kp + 5;
    for (std::size_t rows = 1; rows <= max_rows; ++rows) {
      std::vector<std::int8_t> a(rows * lda);
      AlignedBuffer<std::int8_t> panel(kp * kNr);
      for (auto& x : a) x = static_cast<std::int8_t>(any(rng));
      for (std::size_t i = 0; i < kp * kNr; ++i) panel.data()[i] = static_cast<std::int8_t>(any(rng));
      std::fill_n(a.begin(), kp, std::int8_t{127});
      for (std::size_t t = 0; t < kp; ++t) {
        panel.data()[(t / 4) * kNr * 4 + 3 * 4 + t % 4] = -127;
        panel.data()[(t / 4) * kNr * 4 + 30 * 4 + t % 4] = 127;
        a[(rows - 1) * lda + t] = static_cast<std::int8_t>(t % 2 == 0 ? -127 : 127);
      }
      std::vector<std::int32_t> sums(kNr, 0);  // the panel's column sums (the VNNI tile's correction)
      for (std::size_t j = 0; j < kNr; ++j) {
        for (std::size_t t = 0; t < kp; ++t) sums[j] += panel.data()[(t / 4) * kNr * 4 + j * 4 + t % 4];
      }
      std::vector<std::int32_t> expected(max_rows * kNr, -7);
      std::vector<std::int32_t> got(max_rows * kNr, -7);
      detail::int8_tile_portable(a.data(), lda, rows, panel.data(), kp, sums.data(), expected.data());
      if (offset) {
        for (std::size_t r = 0; r < rows; ++r) detail::int8_offset_row(a.data() + r * lda, kp);
      }
      tile(a.data(), lda, rows, panel.data(), kp, sums.data(), got.data());
      ASSERT_EQ(got, expected) << "kp=" << kp << " rows=" << rows;
      if (rows > 1) {  // (a single row is the alternating last one)
        EXPECT_EQ(got[3], -127 * 127 * static_cast<std::int32_t>(kp));
        EXPECT_EQ(got[30], 127 * 127 * static_cast<std::int32_t>(kp));
      }
    }
  }
}

TEST(GemmInt8Test, Avx2TileEqualsPortableTile) {
  if (!cpu_features().avx2_fma) GTEST_SKIP() << "CPU lacks AVX2";
  expect_tile_equals_portable(detail::int8_tile_avx2, detail::kInt8MR, /*offset=*/false, 17);
}

TEST(GemmInt8Test, VnniTileEqualsPortableTile) {
  if (!cpu_features().avx512_vnni) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  expect_tile_equals_portable(detail::int8_tile_avx512_vnni, detail::kInt8VnniMR, /*offset=*/true, 29);
}

// Every quantiser the machine has gives the portable one's int8 values and scale exactly:
// ties at .5 (round to nearest even), values that clamp, padding, lengths around the vector
// widths, and the rows that quantise to zero (all zero, NaN, inf) or are tiny enough that
// 127 / max|x| overflows.
TEST(GemmInt8Test, SimdQuantisersEqualPortable) {
  using QuantiseFn = float (*)(const float*, std::size_t, std::size_t, std::int8_t*);
  std::vector<std::pair<const char*, QuantiseFn>> quantisers;
  if (cpu_features().avx2_fma) quantisers.emplace_back("avx2", detail::int8_quantize_row_avx2);
  if (cpu_features().avx512) quantisers.emplace_back("avx512", detail::int8_quantize_row_avx512);
  if (quantisers.empty()) GTEST_SKIP() << "CPU lacks AVX2";
  std::mt19937 rng(23);
  std::vector<std::vector<float>> rows;
  for (const std::size_t k : {1, 3, 7, 8, 9, 16, 31, 32, 33, 63, 64, 65, 100, 384, 1537}) {
    rows.push_back(normal_vector(k, rng));
    std::vector<float> ties(k);  // max 127: x · inv == x, so the .5 values are exact ties
    for (std::size_t i = 0; i < k; ++i) ties[i] = static_cast<float>(static_cast<int>(i % 11) - 5) + 0.5F;
    ties[k - 1] = -127.0F;
    rows.push_back(ties);
    rows.push_back(std::vector<float>(k, 0.0F));
    auto tiny = normal_vector(k, rng, 1e-38F);
    for (std::size_t i = 0; i < k; ++i) {  // a zero (0 · inv) and the largest at the end
      if (i == 0) tiny[i] = 0.0F;
      if (i + 1 == k) tiny[i] = 2e-38F;
    }
    rows.push_back(tiny);
    auto bad = normal_vector(k, rng);
    bad[k / 2] = std::numeric_limits<float>::quiet_NaN();
    rows.push_back(bad);
    bad[k / 2] = -std::numeric_limits<float>::infinity();
    rows.push_back(bad);
  }
  for (const auto& x : rows) {
    const std::size_t k = x.size();
    const std::size_t kp = (k + 3) / 4 * 4;
    std::vector<std::int8_t> expected(kp, 99);
    const float expected_scale = detail::int8_quantize_row_portable(x.data(), k, kp, expected.data());
    for (const auto& [name, fn] : quantisers) {
      std::vector<std::int8_t> got(kp, 99);
      const float scale = fn(x.data(), k, kp, got.data());
      EXPECT_EQ(std::memcmp(&scale, &expected_scale, sizeof(float)), 0) << name << " k=" << k;
      EXPECT_EQ(got, expected) << name << " k=" << k;
    }
  }
}
#endif

// The portable int32 sums against a direct dequantised double reference: the kernel, the
// packing and the epilogue are right (independent of any SIMD path).
TEST(GemmInt8Test, PortableMatchesDequantisedReference) {
  const std::size_t m = 5, n = 37, k = 19;
  std::mt19937 rng(7);
  const auto a = normal_vector(m * k, rng);
  const auto wt = normal_vector(n * k, rng);
  const auto bias = normal_vector(n, rng);
  const auto res = normal_vector(m * n, rng);
  for (const Activation act :
       {Activation::Relu, Activation::Gelu, Activation::Tanh, Activation::Silu, Activation::GeluTanh}) {
    for (const Isa isa : {Isa::Portable, active_isa()}) {
      const QuantizedLinear w(wt, n, k, bias, isa);
      const auto got = run_int8(w, a, k, m, Epilogue{act, res.data(), n}, n, nullptr);
      for (std::size_t i = 0; i < m; ++i) {
        float amax = 0.0F;
        for (std::size_t t = 0; t < k; ++t) amax = std::max(amax, std::fabs(a[i * k + t]));
        for (std::size_t j = 0; j < n; ++j) {
          float wmax = 0.0F;
          for (std::size_t t = 0; t < k; ++t) wmax = std::max(wmax, std::fabs(wt[j * k + t]));
          const double sa = static_cast<double>(amax) / 127.0, sw = static_cast<double>(wmax) / 127.0;
          double acc = 0.0;
          for (std::size_t t = 0; t < k; ++t) {
            acc += std::nearbyint(static_cast<double>(a[i * k + t]) / sa) *
                   std::nearbyint(static_cast<double>(wt[j * k + t]) / sw);
          }
          const double x = acc * sa * sw + static_cast<double>(bias[j]);
          const double activated =
              act == Activation::Relu   ? std::max(0.0, x)
              : act == Activation::Silu ? x / (1.0 + std::exp(-x))
              : act == Activation::GeluTanh
                  ? 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
              : act == Activation::Gelu ? 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))
                                        : std::tanh(x);
          const double expect = activated + static_cast<double>(res[i * n + j]);
          EXPECT_NEAR(static_cast<double>(got[i * n + j]), expect, 1e-4 * (1.0 + std::fabs(expect)))
              << i << "," << j;
        }
      }
    }
  }
}

// Int8 against fp32 linear() on bge-small shapes. Measured (this machine, VNNI): cosine
// between rows 0.999933 (n = 384) and 0.999927 (n = 1536), max row relative L2 error
// 0.0116 / 0.0122 (printed below); the bounds leave room.
TEST(GemmInt8Test, CloseToFp32) {
  ThreadPool pool(2);
  const std::size_t m = 32, k = 384;
  for (const std::size_t n : {384, 1536}) {
    std::mt19937 rng(static_cast<unsigned>(n));
    const auto a = normal_vector(m * k, rng);
    const auto wt = normal_vector(n * k, rng, 0.05F);
    const auto bias = normal_vector(n, rng, 0.1F);
    const PackedLinear fp(wt, n, k, bias);
    const QuantizedLinear q(wt, n, k, bias);
    std::vector<float> ref(m * n);
    linear(a.data(), k, m, fp, ref.data(), n, {}, &pool);
    const auto got = run_int8(q, a, k, m, {}, n, &pool);
    double min_cos = 1.0, max_rel = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      double dot = 0, nr = 0, ng = 0, err = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const auto x = static_cast<double>(ref[i * n + j]);
        const auto y = static_cast<double>(got[i * n + j]);
        dot += x * y;
        nr += x * x;
        ng += y * y;
        err += (x - y) * (x - y);
      }
      min_cos = std::min(min_cos, dot / std::sqrt(nr * ng));
      max_rel = std::max(max_rel, std::sqrt(err / nr));
    }
    std::printf("int8 vs fp32 n=%zu: min row cosine %.6f, max row relative L2 error %.5f\n", n, min_cos,
                max_rel);
    EXPECT_GE(min_cos, 0.999);
    EXPECT_LE(max_rel, 0.05);
  }
}

TEST(GemmInt8Test, BytesAboutAQuarterOfFp32) {
  std::mt19937 rng(3);
  const auto wt = normal_vector(384 * 384, rng);
  const auto bias = normal_vector(384, rng);
  const PackedLinear fp(wt, 384, 384, bias);
  const QuantizedLinear q(wt, 384, 384, bias);
  EXPECT_LE(static_cast<double>(q.bytes()), 0.3 * static_cast<double>(fp.bytes()));
  EXPECT_GE(static_cast<double>(q.bytes()), 0.25 * static_cast<double>(fp.bytes()));
}

TEST(GemmInt8Test, ZeroRowGivesBiasExactly) {
  const std::size_t m = 3, n = 40, k = 10;
  std::mt19937 rng(11);
  auto a = normal_vector(m * k, rng);
  std::fill_n(a.begin() + k, k, 0.0F);                     // row 1 is all zero
  a[2 * k + 3] = std::numeric_limits<float>::quiet_NaN();  // row 2 is not finite: treated as zero
  const auto wt = normal_vector(n * k, rng);
  const auto bias = normal_vector(n, rng);
  for (const Isa isa : {Isa::Portable, active_isa()}) {
    const QuantizedLinear w(wt, n, k, bias, isa);
    const auto got = run_int8(w, a, k, m, {}, n, nullptr);
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(got[n + j], bias[j]) << j;
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(got[2 * n + j], bias[j]) << j;
    for (const float v : got) EXPECT_TRUE(std::isfinite(v));
  }
}

TEST(GemmInt8Test, ZeroWeightRowAndResidualAliasingC) {
  const std::size_t m = 4, n = 20, k = 9;
  std::mt19937 rng(13);
  const auto a = normal_vector(m * k, rng);
  auto wt = normal_vector(n * k, rng);
  std::fill_n(wt.begin() + 2 * k, k, 0.0F);  // output column 2 has an all-zero weight row
  const auto bias = normal_vector(n, rng);
  for (const Isa isa : {Isa::Portable, active_isa()}) {
    const QuantizedLinear w(wt, n, k, bias, isa);
    auto c = normal_vector(m * n, rng);
    const auto separate = run_int8(w, a, k, m, Epilogue{Activation::None, c.data(), n}, n, nullptr);
    linear_int8(a.data(), k, m, w, c.data(), n, Epilogue{Activation::None, c.data(), n});
    EXPECT_EQ(c, separate);
  }
}

#if defined(__x86_64__)
// The AVX-512 row quantiser gives the portable quantiser's numbers: round to nearest even
// of clamp(x · 127 / max|x|), zero padding to kp.
TEST(GemmInt8Test, Avx512QuantiserMatchesDefinition) {
  if (!cpu_features().avx512) GTEST_SKIP() << "CPU lacks AVX-512";
  std::mt19937 rng(5);
  for (const std::size_t k : {1, 7, 16, 33, 384}) {
    const auto x = normal_vector(k, rng);
    const std::size_t kp = (k + 3) / 4 * 4;
    std::vector<std::int8_t> q(kp, 99);
    const float scale = detail::int8_quantize_row_avx512(x.data(), k, kp, q.data());
    float max_abs = 0.0F;
    for (const float v : x) max_abs = std::max(max_abs, std::fabs(v));
    EXPECT_EQ(scale, max_abs / 127.0F);
    const float inv = 127.0F / max_abs;
    for (std::size_t i = 0; i < kp; ++i) {
      const float expect = i < k ? std::nearbyint(std::clamp(x[i] * inv, -127.0F, 127.0F)) : 0.0F;
      EXPECT_EQ(static_cast<float>(q[i]), expect) << "k=" << k << " i=" << i;
    }
  }
}
#endif

TEST(GemmInt8Test, RejectsMismatchedSizes) {
  const std::vector<float> wt(10);
  EXPECT_ANY_THROW(QuantizedLinear(wt, 3, 4, {}));
}

}  // namespace
}  // namespace warden::kernels

namespace warden::kernels {
namespace {

// Weights so small that max|w| / 127 underflows to zero (denormals a fuzzed checkpoint
// held) quantise to a zero row with scale 0, not to NaN casts (found by warden-fuzz-model).
TEST(QuantizeRows, RowsWhoseScaleUnderflowsAreZero) {
  const float tiny = 1e-44F;  // a denormal: tiny / 127 rounds to 0
  const std::vector<float> w{tiny, -tiny, 0.0F, tiny, 0.5F, -1.0F, 0.25F, 0.0F};
  const QuantizedRows q = quantize_rows(w, 2, 4);
  EXPECT_EQ(q.scales[0], 0.0F);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(q.values[i], 0) << i;
  EXPECT_FLOAT_EQ(q.scales[1], 1.0F / 127.0F);
  EXPECT_EQ(q.values[5], -127);
  const QuantizedLinear layer(w, 2, 4, {});
  const std::vector<float> a{1.0F, 2.0F, 3.0F, 4.0F};
  std::vector<float> c(2);
  linear_int8(a.data(), 4, 1, layer, c.data(), 2);
  EXPECT_EQ(c[0], 0.0F);
  EXPECT_TRUE(std::isfinite(c[1]));
}

}  // namespace
}  // namespace warden::kernels

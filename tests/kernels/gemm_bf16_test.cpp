#include "kernels/gemm_bf16.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm.hpp"

namespace warden::kernels {
namespace {

using detail::from_bf16;
using detail::to_bf16;

std::vector<float> normal_vector(std::size_t n, std::mt19937& rng, float stddev = 1.0F) {
  std::normal_distribution<float> dist(0.0F, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool has_avx512_bf16() {
  return cpu_features().avx512 && cpu_features().avx512_bf16;
}

float bf16_round(float x) {
  return from_bf16(to_bf16(x));
}

// Runs linear_bf16 with strides wider than the rows and returns C as m x n.
std::vector<float> run_bf16(const Bf16Linear& w, const std::vector<float>& a, std::size_t lda, std::size_t m,
                            const Epilogue& ep, std::size_t ldc, ThreadPool* pool) {
  std::vector<float> c(m * ldc, 12345.0F);
  linear_bf16(a.data(), lda, m, w, c.data(), ldc, ep, pool);
  std::vector<float> out(m * w.n());
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < w.n(); ++j) out[i * w.n() + j] = c[i * ldc + j];
  }
  // The padding between rows of C is never written.
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = w.n(); j < ldc; ++j) EXPECT_EQ(c[i * ldc + j], 12345.0F);
  }
  return out;
}

double activate(double x, Activation act) {
  switch (act) {
    case Activation::None:
      return x;
    case Activation::Relu:
      return std::max(0.0, x);
    case Activation::Gelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::Tanh:
      return std::tanh(x);
    case Activation::Silu:
      return x / (1.0 + std::exp(-x));
    case Activation::GeluTanh:
      return 0.5 * x *
             (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

// Checks got (m x n) against a float64 reference on the bf16-rounded A and W. The products
// are exact in fp32, so the only error is the fp32 summation (at most (k+1)·eps·Σ|a·w|, in
// any order) plus the fp32 epilogue (the vectorised GELU is within a few 1e-7).
void expect_matches_reference(const std::vector<float>& got, const std::vector<float>& a, std::size_t lda,
                              std::size_t m, const std::vector<float>& wt, std::size_t n, std::size_t k,
                              const std::vector<float>& bias, Activation act, const float* res,
                              std::size_t ldr, const char* what) {
  constexpr double kEps = 0x1p-23;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0.0, sum_abs = 0.0;
      for (std::size_t t = 0; t < k; ++t) {
        const double p =
            static_cast<double>(bf16_round(a[i * lda + t])) * static_cast<double>(bf16_round(wt[j * k + t]));
        sum += p;
        sum_abs += std::fabs(p);
      }
      const double b = bias.empty() ? 0.0 : static_cast<double>(bias[j]);
      const double r = res != nullptr ? static_cast<double>(res[i * ldr + j]) : 0.0;
      const double expect = activate(sum + b, act) + r;
      const double tol = static_cast<double>(k + 4) * kEps * (sum_abs + std::fabs(b)) * 1.2 +
                         2e-6 * (1.0 + std::fabs(expect));
      ASSERT_NEAR(static_cast<double>(got[i * n + j]), expect, tol)
          << what << " m=" << m << " n=" << n << " k=" << k << " at " << i << "," << j;
    }
  }
}

// Every kernel this CPU can run (the float epilogue follows active_isa(), so running the
// suite under WARDEN_ISA=portable|avx2 covers those epilogues too).
std::vector<Isa> isas_to_test() {
  std::vector<Isa> isas{Isa::Portable};
#if defined(__x86_64__)
  if (cpu_features().avx2_fma) isas.push_back(Isa::Avx2);
  if (cpu_features().avx512) isas.push_back(Isa::Avx512);
  if (cpu_features().amx_bf16) isas.push_back(Isa::Amx);
#endif
  return isas;
}

TEST(GemmBf16Test, RoundsToNearestEven) {
  const auto bits = [](std::uint32_t b) { return std::bit_cast<float>(b); };
  EXPECT_EQ(to_bf16(1.0F), 0x3F80);
  EXPECT_EQ(to_bf16(-2.0F), 0xC000);
  EXPECT_EQ(to_bf16(-0.0F), 0x8000);
  EXPECT_EQ(to_bf16(bits(0x3F808000U)), 0x3F80);                  // tie, even below
  EXPECT_EQ(to_bf16(bits(0x3F818000U)), 0x3F82);                  // tie, even above
  EXPECT_EQ(to_bf16(bits(0x3F808001U)), 0x3F81);                  // just over half
  EXPECT_EQ(to_bf16(bits(0x3F807FFFU)), 0x3F80);                  // just under half
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to +inf
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(to_bf16(bits(0x00000001U)), 0x0000);  // smallest denormal: kept as IEEE rounds it
  EXPECT_EQ(to_bf16(bits(0x00018000U)), 0x0002);
  // NaN stays NaN (quiet), even when only low payload bits were set.
  EXPECT_EQ(to_bf16(bits(0x7F800001U)), 0x7FC0);
  EXPECT_EQ(to_bf16(bits(0xFFC00000U)), 0xFFC0);
  EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(from_bf16(0x3F80), 1.0F);
}

// Odd shapes, every epilogue, strides, with and without a pool, against float64.
TEST(GemmBf16Test, MatchesDoubleReference) {
  ThreadPool pool(2);
  for (const Isa isa : isas_to_test()) {
    for (const std::size_t m : {1, 2, 5, 12, 13, 16, 17, 25, 37, 65}) {
      for (const std::size_t n : {1, 31, 33, 70}) {
        for (const std::size_t k : {1, 2, 17, 63, 130}) {
          std::mt19937 rng(static_cast<unsigned>(m * 10000 + n * 100 + k));
          const std::size_t lda = k + 3;
          const std::size_t ldc = n + 5;
          const auto a = normal_vector(m * lda, rng);
          const auto wt = normal_vector(n * k, rng, 0.1F);
          const auto bias = (m + n) % 2 == 0 ? std::vector<float>{} : normal_vector(n, rng);
          const auto res = normal_vector(m * ldc, rng);
          const Bf16Linear w(wt, n, k, bias, isa);
          ASSERT_EQ(w.k_padded() % 2, 0U);
          for (const Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Tanh,
                                       Activation::Silu, Activation::GeluTanh}) {
            const bool with_res = act != Activation::Relu;
            const Epilogue ep{act, with_res ? res.data() : nullptr, ldc};
            ThreadPool* p = (m + k) % 2 == 0 ? &pool : nullptr;
            const auto got = run_bf16(w, a, lda, m, ep, ldc, p);
            expect_matches_reference(got, a, lda, m, wt, n, k, bias, act, with_res ? res.data() : nullptr,
                                     ldc, isa_name(isa).data());
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// The pool only splits the work: the same tiles, the same sums, bit for bit.
TEST(GemmBf16Test, PoolGivesTheSameBits) {
  ThreadPool pool(3);
  for (const Isa isa : isas_to_test()) {
    for (const std::size_t m : {1, 7, 100, 300}) {
      const std::size_t n = 200, k = 77;
      std::mt19937 rng(static_cast<unsigned>(m));
      const auto a = normal_vector(m * k, rng);
      const auto wt = normal_vector(n * k, rng, 0.1F);
      const auto bias = normal_vector(n, rng);
      const Bf16Linear w(wt, n, k, bias, isa);
      const auto serial = run_bf16(w, a, k, m, {Activation::Gelu}, n, nullptr);
      const auto threaded = run_bf16(w, a, k, m, {Activation::Gelu}, n, &pool);
      EXPECT_EQ(std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)), 0) << m;
    }
  }
}

TEST(GemmBf16Test, ResidualMayAliasC) {
  ThreadPool pool(2);
  const std::size_t m = 29, n = 45, k = 33, ld = 50;
  std::mt19937 rng(13);
  const auto a = normal_vector(m * k, rng);
  const auto wt = normal_vector(n * k, rng);
  const auto bias = normal_vector(n, rng);
  for (const Isa isa : isas_to_test()) {
    const Bf16Linear w(wt, n, k, bias, isa);
    for (const Activation act : {Activation::None, Activation::Gelu, Activation::Tanh}) {
      auto c = normal_vector(m * ld, rng);
      const auto separate = run_bf16(w, a, k, m, Epilogue{act, c.data(), ld}, ld, &pool);
      linear_bf16(a.data(), k, m, w, c.data(), ld, Epilogue{act, c.data(), ld}, &pool);
      for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(c[i * ld + j], separate[i * n + j]) << i << "," << j;
      }
    }
  }
}

TEST(GemmBf16Test, FromBf16EqualsFloatConstructor) {
  const std::size_t m = 9, n = 41, k = 27;
  std::mt19937 rng(17);
  const auto a = normal_vector(m * k, rng);
  const auto wt = normal_vector(n * k, rng);
  const auto bias = normal_vector(n, rng);
  std::vector<std::uint16_t> raw(wt.size());
  std::vector<float> widened(wt.size());
  for (std::size_t i = 0; i < wt.size(); ++i) {
    raw[i] = to_bf16(wt[i]);
    widened[i] = from_bf16(raw[i]);
  }
  for (const Isa isa : isas_to_test()) {
    const Bf16Linear from_float(wt, n, k, bias, isa);
    const Bf16Linear from_widened(widened, n, k, bias, isa);
    const Bf16Linear from_raw = Bf16Linear::from_bf16(raw, n, k, bias, isa);
    ASSERT_EQ(from_raw.bytes(), from_float.bytes());
    const std::size_t halves = (from_raw.bytes() - ((n + 31) / 32 * 32) * sizeof(float)) / 2;
    EXPECT_EQ(std::memcmp(from_raw.panels(), from_float.panels(), halves * 2), 0);
    EXPECT_EQ(std::memcmp(from_raw.panels(), from_widened.panels(), halves * 2), 0);
    const auto x = run_bf16(from_float, a, k, m, {Activation::Gelu}, n, nullptr);
    const auto y = run_bf16(from_raw, a, k, m, {Activation::Gelu}, n, nullptr);
    EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0);
  }
}

// The vdpbf16ps kernel against the portable one: the same rounded inputs, so they differ only
// by the order of the fp32 sums (and vdpbf16ps's flushing of denormals, absent here).
TEST(GemmBf16Test, Avx512Bf16CloseToPortable) {
  if (!has_avx512_bf16()) GTEST_SKIP() << "CPU lacks AVX-512 BF16";
  ThreadPool pool(2);
  for (const std::size_t m : {1, 11, 37}) {
    for (const std::size_t n : {17, 64, 100}) {
      for (const std::size_t k : {3, 64, 385}) {
        std::mt19937 rng(static_cast<unsigned>(m * 1000 + n * 10 + k));
        const auto a = normal_vector(m * k, rng);
        const auto wt = normal_vector(n * k, rng, 0.1F);
        const auto bias = normal_vector(n, rng);
        const Bf16Linear portable(wt, n, k, bias, Isa::Portable);
        const Bf16Linear fast(wt, n, k, bias, Isa::Avx512);
        ASSERT_FALSE(portable.uses_avx512_bf16());
        ASSERT_TRUE(fast.uses_avx512_bf16());
        const auto x = run_bf16(portable, a, k, m, {}, n, nullptr);
        const auto y = run_bf16(fast, a, k, m, {}, n, &pool);
        for (std::size_t i = 0; i < x.size(); ++i) {
          ASSERT_NEAR(x[i], y[i], 2e-5F * (1.0F + std::fabs(x[i]))) << m << "," << n << "," << k << " @" << i;
        }
        expect_matches_reference(y, a, k, m, wt, n, k, bias, Activation::None, nullptr, 0, "avx512_bf16");
      }
    }
  }
}

#if defined(__x86_64__)
// The tile kernels directly (the AVX-512F one is otherwise reached only on a CPU with
// AVX-512 but without its BF16 extension).
TEST(GemmBf16Test, TileKernelsAgree) {
  if (!cpu_features().avx512) GTEST_SKIP() << "CPU lacks AVX-512";
  constexpr std::size_t kNr = detail::kBf16PanelWidth, kMr = detail::kBf16MR;
  std::mt19937 rng(23);
  for (const std::size_t kp : {2, 16, 386}) {
    for (const std::size_t rows : {std::size_t{1}, kMr / 2, kMr}) {
      const std::size_t lda = kp + 6;
      std::vector<std::uint16_t> a(rows * lda);
      for (auto& x : a) x = to_bf16(std::normal_distribution<float>(0.0F, 1.0F)(rng));
      AlignedBuffer<std::uint16_t> panel(kp * kNr);  // the kernels load it aligned
      for (std::size_t i = 0; i < kp * kNr; ++i) {
        panel[i] = to_bf16(std::normal_distribution<float>(0.0F, 0.1F)(rng));
      }
      const std::uint16_t* aligned = panel.data();
      alignas(64) float expect[kMr * kNr], got[kMr * kNr];
      detail::bf16_tile_portable(a.data(), lda, rows, aligned, kp, expect);
      detail::bf16_tile_avx512(a.data(), lda, rows, aligned, kp, got);
      for (std::size_t i = 0; i < rows * kNr; ++i) ASSERT_NEAR(got[i], expect[i], 1e-5F) << kp << " " << i;
      if (cpu_features().avx2_fma) {
        detail::bf16_tile_avx2(a.data(), lda, rows, aligned, kp, got);
        for (std::size_t i = 0; i < rows * kNr; ++i) ASSERT_NEAR(got[i], expect[i], 1e-5F) << kp << " " << i;
      }
      if (has_avx512_bf16()) {
        detail::bf16_tile_avx512_bf16(a.data(), lda, rows, aligned, kp, got);
        for (std::size_t i = 0; i < rows * kNr; ++i) ASSERT_NEAR(got[i], expect[i], 1e-5F) << kp << " " << i;
      }
    }
  }
}

TEST(GemmBf16Test, SimdRowRoundingIsToBf16) {
  if (!cpu_features().avx512) GTEST_SKIP() << "CPU lacks AVX-512";
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (const std::size_t k : {1, 7, 16, 33, 384}) {
    std::vector<float> x(k);
    for (auto& v : x) v = std::bit_cast<float>(any_bits(rng));  // NaNs, infinities, denormals
    if (k > 3) {
      x[0] = std::bit_cast<float>(0x3F808000U);  // ties
      x[1] = std::bit_cast<float>(0x3F818000U);
      x[2] = std::bit_cast<float>(0x7F800001U);  // NaN with low payload only
    }
    const std::size_t kp = (k + 1) / 2 * 2;
    for (const auto round_row : {detail::bf16_round_row_avx512, detail::bf16_round_row_avx2}) {
      std::vector<std::uint16_t> got(kp + 1, 0xABCD);
      round_row(x.data(), k, kp, got.data());
      for (std::size_t i = 0; i < kp; ++i) {
        EXPECT_EQ(got[i], i < k ? to_bf16(x[i]) : 0) << "k=" << k << " i=" << i;
      }
      EXPECT_EQ(got[kp], 0xABCD);  // nothing past kp
    }
  }
}
#endif

// Bf16 against fp32 linear() on bge-small shapes (rows printed: cosine and relative error).
TEST(GemmBf16Test, CloseToFp32) {
  ThreadPool pool(2);
  const std::size_t m = 32;
  struct Shape {
    std::size_t n, k;
  };
  for (const Shape s : {Shape{384, 384}, Shape{1536, 384}, Shape{384, 1536}}) {
    std::mt19937 rng(static_cast<unsigned>(s.n + s.k));
    const auto a = normal_vector(m * s.k, rng);
    const auto wt = normal_vector(s.n * s.k, rng, 0.05F);
    const auto bias = normal_vector(s.n, rng, 0.1F);
    const PackedLinear fp(wt, s.n, s.k, bias);
    const Bf16Linear bf(wt, s.n, s.k, bias);
    std::vector<float> ref(m * s.n);
    linear(a.data(), s.k, m, fp, ref.data(), s.n, {}, &pool);
    const auto got = run_bf16(bf, a, s.k, m, {}, s.n, &pool);
    double min_cos = 1.0, max_rel = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      double dot = 0, nr = 0, ng = 0, err = 0;
      for (std::size_t j = 0; j < s.n; ++j) {
        const auto x = static_cast<double>(ref[i * s.n + j]);
        const auto y = static_cast<double>(got[i * s.n + j]);
        dot += x * y;
        nr += x * x;
        ng += y * y;
        err += (x - y) * (x - y);
      }
      min_cos = std::min(min_cos, dot / std::sqrt(nr * ng));
      max_rel = std::max(max_rel, std::sqrt(err / nr));
    }
    std::printf("bf16 vs fp32 n=%zu k=%zu: min row cosine %.6f, max row relative L2 error %.5f\n", s.n, s.k,
                min_cos, max_rel);
    EXPECT_GE(min_cos, 0.999);
    EXPECT_LE(max_rel, 0.02);
  }
}

TEST(GemmBf16Test, BytesAboutHalfOfFp32) {
  std::mt19937 rng(3);
  const auto wt = normal_vector(384 * 384, rng);
  const auto bias = normal_vector(384, rng);
  const PackedLinear fp(wt, 384, 384, bias);
  const Bf16Linear bf(wt, 384, 384, bias);
  EXPECT_LE(static_cast<double>(bf.bytes()), 0.51 * static_cast<double>(fp.bytes()));
  EXPECT_GE(static_cast<double>(bf.bytes()), 0.5 * static_cast<double>(fp.bytes()));
}

// An all-zero row of A gives exactly the bias; a NaN in a row makes that row (and only that
// row) NaN: bf16 represents NaN, so nothing is zeroed as in the int8 kernel.
TEST(GemmBf16Test, ZeroAndNanRows) {
  const std::size_t m = 4, n = 40, k = 10;
  std::mt19937 rng(11);
  auto a = normal_vector(m * k, rng);
  std::fill_n(a.begin() + k, k, 0.0F);                     // row 1 is all zero
  a[2 * k + 3] = std::numeric_limits<float>::quiet_NaN();  // row 2 has a NaN
  const auto wt = normal_vector(n * k, rng);
  const auto bias = normal_vector(n, rng);
  for (const Isa isa : isas_to_test()) {
    const Bf16Linear w(wt, n, k, bias, isa);
    const auto got = run_bf16(w, a, k, m, {}, n, nullptr);
    for (std::size_t j = 0; j < n; ++j) {
      EXPECT_EQ(got[n + j], bias[j]) << j;
      EXPECT_TRUE(std::isnan(got[2 * n + j])) << j;
      EXPECT_TRUE(std::isfinite(got[j]) && std::isfinite(got[3 * n + j])) << j;
    }
  }
}

TEST(GemmBf16Test, EmptyDepthGivesActivatedBias) {
  const std::size_t m = 3, n = 5;
  const std::vector<float> bias{-1.0F, 0.0F, 0.5F, 2.0F, -3.0F};
  for (const Isa isa : isas_to_test()) {
    const Bf16Linear w(std::span<const float>{}, n, 0, bias, isa);
    const std::vector<float> a(m, 1.0F);
    const auto got = run_bf16(w, a, 1, m, {Activation::Relu}, n, nullptr);
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(got[i * n + j], std::max(0.0F, bias[j]));
    }
  }
}

TEST(GemmBf16Test, KernelFollowsIsaAndCpu) {
  const std::vector<float> wt(6, 1.0F);
  const Bf16Linear portable(wt, 2, 3, {}, Isa::Portable);
  EXPECT_FALSE(portable.uses_avx2() || portable.uses_avx512() || portable.uses_avx512_bf16());
  const Bf16Linear avx2(wt, 2, 3, {}, Isa::Avx2);
  EXPECT_EQ(avx2.uses_avx2(), cpu_features().avx2_fma);
  const Bf16Linear avx512(wt, 2, 3, {}, Isa::Avx512);
  EXPECT_EQ(avx512.uses_avx512_bf16(), has_avx512_bf16());
  EXPECT_EQ(avx512.uses_avx512(), cpu_features().avx512 && !cpu_features().avx512_bf16);
  EXPECT_FALSE(avx512.uses_amx());
  const Bf16Linear tiles(wt, 2, 3, {}, Isa::Amx);
  EXPECT_EQ(tiles.uses_amx(), cpu_features().amx_bf16);
  EXPECT_EQ(tiles.k_padded(), cpu_features().amx_bf16 ? 32U : 4U);
}

TEST(GemmBf16Test, RejectsMismatchedSizes) {
  const std::vector<float> wt(10);
  const std::vector<std::uint16_t> raw(10);
  EXPECT_ANY_THROW(Bf16Linear(wt, 3, 4, {}));
  EXPECT_ANY_THROW(static_cast<void>(Bf16Linear::from_bf16(raw, 3, 4, {})));
  EXPECT_ANY_THROW(Bf16Linear(wt, 2, 5, std::vector<float>(3)));
}

}  // namespace
}  // namespace warden::kernels

#include "kernels/gemm_int8.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(GemmInt8Test, VnniEqualsPortableExactly) {
  if (!has_vnni()) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  ThreadPool pool(2);
  for (const std::size_t m : {1, 3, 17}) {
    for (const std::size_t n : {1, 15, 33, 384}) {
      for (const std::size_t k : {1, 7, 64, 100, 384}) {
        std::mt19937 rng(static_cast<unsigned>(m * 1000 + n * 10 + k));
        const std::size_t lda = k + 3;
        const std::size_t ldc = n + 5;
        const auto a = normal_vector(m * lda, rng);
        const auto wt = normal_vector(n * k, rng, 0.1F);
        const auto bias = normal_vector(n, rng);
        const auto res = normal_vector(m * ldc, rng);
        const QuantizedLinear portable(wt, n, k, bias, Isa::Portable);
        const QuantizedLinear vnni(wt, n, k, bias, Isa::Avx512);
        ASSERT_FALSE(portable.uses_vnni());
        ASSERT_TRUE(vnni.uses_vnni());
        const Epilogue ep{Activation::Gelu, res.data(), ldc};
        const auto expected = run_int8(portable, a, lda, m, ep, ldc, nullptr);
        const auto got = run_int8(vnni, a, lda, m, ep, ldc, &pool);
        ASSERT_EQ(std::memcmp(expected.data(), got.data(), expected.size() * sizeof(float)), 0)
            << "m=" << m << " n=" << n << " k=" << k;
      }
    }
  }
}

// The portable int32 sums against a direct dequantised double reference: the kernel, the
// packing and the epilogue are right (independent of any SIMD path).
TEST(GemmInt8Test, PortableMatchesDequantisedReference) {
  const std::size_t m = 5, n = 37, k = 19;
  std::mt19937 rng(7);
  const auto a = normal_vector(m * k, rng);
  const auto wt = normal_vector(n * k, rng);
  const auto bias = normal_vector(n, rng);
  const auto res = normal_vector(m * n, rng);
  for (const Activation act : {Activation::Relu, Activation::Gelu, Activation::Tanh}) {
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
          const double activated = act == Activation::Relu   ? std::max(0.0, x)
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

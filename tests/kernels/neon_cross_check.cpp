// A self-contained check of the NEON kernels, cross-compiled for AArch64 and run under
// qemu-user by scripts/check-neon (the x86 CI machines cannot run them, and GoogleTest is
// not available as an arm64 library there). Every NEON kernel is compared against a
// double-precision reference and against the portable kernel on edge shapes: sizes of 1,
// odd sizes, tails of every width. Prints the largest errors; exits non-zero on any
// mismatch.

#include <arm_neon.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/simd_math_neon.hpp"

namespace warden::kernels {
namespace {

int g_failures = 0;

// The largest error seen by one check (absolute, and as a fraction of the check's bound),
// the largest difference from the portable kernel, and whether a bound was ever broken.
struct Stat {
  std::string name;
  double max_err = 0.0;
  double worst_fraction = 0.0;
  double max_vs_portable = -1.0;  // < 0: not compared
  bool failed = false;

  void error(double err, double bound, const std::string& what) {
    max_err = std::max(max_err, err);
    if (bound > 0.0) worst_fraction = std::max(worst_fraction, err / bound);
    if (!(err <= bound) && !failed) {  // NaN fails too
      std::printf("FAIL %s: %s: error %.3g > bound %.3g\n", name.c_str(), what.c_str(), err, bound);
      failed = true;
      ++g_failures;
    }
  }
  void portable(double diff) { max_vs_portable = std::max(max_vs_portable, diff); }
  void report() const {
    std::printf("%-4s %-40s max err %.3g (%.2f of bound)", failed ? "FAIL" : "ok", name.c_str(), max_err,
                worst_fraction);
    if (max_vs_portable >= 0.0) std::printf(", max diff vs portable %.3g", max_vs_portable);
    std::printf("\n");
  }
};

std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float scale = 1.0F) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double activate(double v, Activation act) {
  switch (act) {
    case Activation::None:
      return v;
    case Activation::Gelu:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Activation::Relu:
      return v > 0 ? v : 0;
    case Activation::Tanh:
      return std::tanh(v);
  }
  return v;
}

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::None:
      return "none";
    case Activation::Gelu:
      return "gelu";
    case Activation::Relu:
      return "relu";
    case Activation::Tanh:
      return "tanh";
  }
  return "?";
}

// ---- vector math -------------------------------------------------------------------

void check_math() {
  Stat exp_stat{"exp_ps, relative, [-87, 88.7]"};
  Stat exp_tiny{"exp_ps, absolute, [-104, -87]"};
  Stat erf_stat{"erf_ps, absolute, [-10, 10]"};
  Stat gelu_stat{"gelu_ps, absolute / max(1, |x|), [-10, 10]"};
  auto each = [](float lo, float hi, std::size_t steps, auto&& fn) {
    for (std::size_t i = 0; i + 4 <= steps; i += 4) {
      float x[4];
      for (std::size_t l = 0; l < 4; ++l) {
        x[l] = lo + (hi - lo) * static_cast<float>(i + l) / static_cast<float>(steps - 1);
      }
      fn(x);
    }
  };
  each(-87.0F, 88.7F, 400000, [&](const float* x) {
    float y[4];
    vst1q_f32(y, neon::exp_ps(vld1q_f32(x)));
    for (int l = 0; l < 4; ++l) {
      const double want = std::exp(double(x[l]));
      exp_stat.error(std::fabs(double(y[l]) - want) / want, 4e-7, "exp");
    }
  });
  each(-104.0F, -87.0F, 4000, [&](const float* x) {
    float y[4];
    vst1q_f32(y, neon::exp_ps(vld1q_f32(x)));
    for (int l = 0; l < 4; ++l)
      exp_tiny.error(std::fabs(double(y[l]) - std::exp(double(x[l]))), 1e-38, "exp");
  });
  each(-10.0F, 10.0F, 200000, [&](const float* x) {
    float y[4], g[4];
    vst1q_f32(y, neon::erf_ps(vld1q_f32(x)));
    vst1q_f32(g, neon::gelu_ps(vld1q_f32(x)));
    for (int l = 0; l < 4; ++l) {
      erf_stat.error(std::fabs(double(y[l]) - std::erf(double(x[l]))), 1e-6, "erf");
      // x/2 scales erf's absolute error: bound it relative to |x| beyond 1.
      const double scale = std::max(1.0, std::fabs(double(x[l])));
      gelu_stat.error(std::fabs(double(g[l]) - activate(double(x[l]), Activation::Gelu)) / scale, 1e-6,
                      "gelu(" + std::to_string(x[l]) + ")");
    }
  });
  for (const float x : {-200.0F, -104.0F, 88.7F, 200.0F}) {
    float in[4] = {x, x, x, x}, y[4];
    vst1q_f32(y, neon::exp_ps(vld1q_f32(in)));
    if (!std::isfinite(y[0]) || y[0] < 0.0F) {
      std::printf("FAIL exp_ps(%g) = %g is not finite and non-negative\n", double(x), double(y[0]));
      ++g_failures;
    }
  }
  exp_stat.report();
  exp_tiny.report();
  erf_stat.report();
  gelu_stat.report();
}

// ---- GEMM --------------------------------------------------------------------------

// padded: strides wider than the rows (as in packed QKV views), with sentinels after each
// row of C; else rows back to back, so that under ASan (scripts/check-neon runs the check
// with it too) a tail read past the last row's end is caught.
void check_linear(Stat& stat, std::size_t m, std::size_t n, std::size_t k, Activation act, bool residual,
                  bool padded, ThreadPool* pool) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 17 + k));
  const std::size_t lda = padded ? k + 3 : k;
  const std::size_t ldc = padded ? n + 5 : n;
  const auto a = random_vector(m * lda, rng);
  const auto w = random_vector(n * k, rng, 0.5F);
  const auto bias = random_vector(n, rng);
  const auto res = random_vector(m * ldc, rng);
  const PackedLinear neon(w, n, k, bias, Isa::Neon);
  const PackedLinear portable(w, n, k, bias, Isa::Portable);
  std::vector<float> c(m * ldc, 12345.0F), cp(m * ldc, 12345.0F);
  const Epilogue ep{act, residual ? res.data() : nullptr, ldc};
  linear(a.data(), lda, m, neon, c.data(), ldc, ep, pool);
  linear(a.data(), lda, m, portable, cp.data(), ldc, ep, pool);
  const std::string what = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                           " act=" + activation_name(act) + (residual ? " + residual" : "") +
                           (padded ? "" : " (tight strides)");
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double dot = double(bias[j]);
      double mag = std::fabs(double(bias[j]));
      for (std::size_t kk = 0; kk < k; ++kk) {
        dot += double(a[i * lda + kk]) * double(w[j * k + kk]);
        mag += std::fabs(double(a[i * lda + kk]) * double(w[j * k + kk]));
      }
      double want = activate(dot, act);
      if (residual) want += double(res[i * ldc + j]);
      const double got = double(c[i * ldc + j]);
      // Scaled by the magnitude of the terms summed: the bound the GoogleTest suite uses.
      stat.error(std::fabs(got - want), 2e-6 * (mag + 1.0), what);
      stat.portable(std::fabs(got - double(cp[i * ldc + j])));
    }
    for (std::size_t j = n; j < ldc; ++j) {
      if (c[i * ldc + j] != 12345.0F) stat.error(1.0, 0.0, "wrote past column n");
    }
  }
}

void check_gemm() {
  Stat shapes{"gemm: edge shapes, no epilogue"};
  // m, n, k around the 8 x 12 tile and the k block of 256: 1s, odd sizes, every tail.
  const std::size_t ms[] = {1, 2, 3, 7, 8, 9, 13, 16, 17, 64, 65, 100};
  const std::size_t ns[] = {1, 2, 3, 4, 5, 7, 11, 12, 13, 23, 24, 25, 33, 100};
  const std::size_t ks[] = {0, 1, 2, 3, 7, 64, 255, 256, 257, 600};
  for (const std::size_t m : ms) {
    for (const std::size_t n : ns) {
      for (const std::size_t k : ks) {
        if (m * n * k > 400000) continue;  // keep the run short under emulation
        check_linear(shapes, m, n, k, Activation::None, false, true, nullptr);
        check_linear(shapes, m, n, k, Activation::None, false, false, nullptr);
      }
    }
  }
  shapes.report();
  ThreadPool pool(3);
  for (const Activation act : {Activation::None, Activation::Gelu, Activation::Relu, Activation::Tanh}) {
    for (const bool residual : {false, true}) {
      Stat stat{std::string("gemm: epilogue ") + activation_name(act) + (residual ? " + residual" : "")};
      for (const auto& [m, n, k] : {std::array<std::size_t, 3>{1, 1, 1},
                                    {5, 7, 3},
                                    {29, 70, 96},
                                    {8, 12, 300},
                                    {13, 37, 513},
                                    {100, 48, 300}}) {
        check_linear(stat, m, n, k, act, residual, true, &pool);
        check_linear(stat, m, n, k, act, residual, false, &pool);
      }
      stat.report();
    }
  }
  {
    // One input column, weight 1: the output is gelu(a) as the kernel computes it.
    Stat stat{"gemm: gelu epilogue over [-10, 10]"};
    const std::size_t m = 2001;
    std::vector<float> a(m);
    for (std::size_t i = 0; i < m; ++i) a[i] = -10.0F + 0.01F * static_cast<float>(i);
    const std::vector<float> w{1.0F};
    const PackedLinear packed(w, 1, 1, {}, Isa::Neon);
    std::vector<float> c(m);
    linear(a.data(), 1, m, packed, c.data(), 1, {Activation::Gelu});
    for (std::size_t i = 0; i < m; ++i) {
      stat.error(std::fabs(double(c[i]) - activate(double(a[i]), Activation::Gelu)), 1e-6, "gelu");
    }
    stat.report();
  }
  {
    Stat stat{"gemm: 3 threads equal 1, bit for bit"};
    std::mt19937 rng(7);
    const std::size_t m = 100, n = 200, k = 300;
    const auto a = random_vector(m * k, rng);
    const auto w = random_vector(n * k, rng);
    const PackedLinear packed(w, n, k, {}, Isa::Neon);
    std::vector<float> c1(m * n), c2(m * n);
    linear(a.data(), k, m, packed, c1.data(), n, {}, nullptr);
    linear(a.data(), k, m, packed, c2.data(), n, {}, &pool);
    for (std::size_t i = 0; i < m * n; ++i)
      stat.error(std::fabs(double(c1[i]) - double(c2[i])), 0.0, "bitwise");
    stat.report();
  }
}

// ---- LayerNorm ---------------------------------------------------------------------

void check_layer_norm() {
  Stat stat{"layer_norm_rows_neon"};
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(3.0F, 2.0F);  // a large mean, as residual streams have
  for (const std::size_t cols : {1U, 2U, 3U, 4U, 5U, 7U, 8U, 9U, 15U, 16U, 17U, 33U, 384U, 767U, 768U}) {
    const std::size_t rows = 5;
    // Input rows back to back (under ASan a read past the last row is caught), output rows
    // padded with sentinels that catch a tail written too wide.
    const std::size_t ld_out = cols + 3;
    std::vector<float> x(rows * cols), g(cols), b(cols);
    for (auto& v : x) v = dist(rng);
    for (auto& v : g) v = dist(rng);
    for (auto& v : b) v = dist(rng);
    std::vector<float> y(rows * ld_out, 12345.0F), yp(rows * ld_out, 12345.0F);
    detail::layer_norm_rows_neon(x.data(), cols, y.data(), ld_out, rows, cols, g.data(), b.data(), 1e-12F);
    detail::layer_norm_rows_portable(x.data(), cols, yp.data(), ld_out, rows, cols, g.data(), b.data(),
                                     1e-12F);
    for (std::size_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * cols;
      double mean = 0, var = 0;
      for (std::size_t j = 0; j < cols; ++j) mean += double(xr[j]);
      mean /= double(cols);
      for (std::size_t j = 0; j < cols; ++j) var += std::pow(double(xr[j]) - mean, 2);
      var /= double(cols);
      for (std::size_t j = 0; j < cols; ++j) {
        const double want = (double(xr[j]) - mean) / std::sqrt(var + 1e-12) * double(g[j]) + double(b[j]);
        stat.error(std::fabs(double(y[r * ld_out + j]) - want), 1e-5 * (1 + std::fabs(want)),
                   "cols=" + std::to_string(cols));
        stat.portable(std::fabs(double(y[r * ld_out + j]) - double(yp[r * ld_out + j])));
      }
      for (std::size_t j = cols; j < ld_out; ++j) {
        if (y[r * ld_out + j] != 12345.0F) {
          stat.error(1.0, 0.0, "wrote past the row, cols=" + std::to_string(cols));
        }
      }
    }
  }
  // Through the dispatcher, in place; a constant row has zero variance.
  std::vector<float> x{1, 2, 3, 4, 10, 10, 10, 10};
  const std::vector<float> g(4, 1.0F), b(4, 0.5F);
  layer_norm(x.data(), 4, x.data(), 4, 2, 4, g.data(), b.data(), 1e-5F);
  stat.error(std::fabs(double(x[0]) - (-1.3416407 + 0.5)), 1e-5, "in place");
  for (int j = 4; j < 8; ++j) stat.error(std::fabs(double(x[j]) - 0.5), 1e-6, "constant row");
  stat.report();
}

// ---- attention ---------------------------------------------------------------------

// Double-precision attention for one head, rows of stride ld.
std::vector<double> attention_reference(const float* q, const float* k, const float* v, std::size_t ld,
                                        std::size_t len, std::size_t dim, double scale) {
  std::vector<double> out(len * dim, 0.0);
  for (std::size_t i = 0; i < len; ++i) {
    std::vector<double> s(len);
    double mx = -1e300;
    for (std::size_t j = 0; j < len; ++j) {
      double dot = 0;
      for (std::size_t d = 0; d < dim; ++d) dot += double(q[i * ld + d]) * double(k[j * ld + d]);
      s[j] = dot * scale;
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

void check_attention() {
  Stat stat{"attend_head_neon"};
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0F, 1.5F);
  for (const std::size_t dim : {1U, 3U, 4U, 7U, 13U, 16U, 24U, 32U, 33U, 64U, 80U}) {
    for (const std::size_t len : {1U, 2U, 3U, 4U, 5U, 7U, 15U, 16U, 17U, 63U, 64U, 65U, 130U}) {
      // Q, K, V of one head in a row of 3 heads' width: the last V row ends the buffer,
      // so a read past the head (or past len) would leave it.
      const std::size_t ld = 3 * dim;
      std::vector<float> qkv(len * ld);
      for (auto& x : qkv) x = dist(rng);
      const std::size_t ld_out = dim + 2;
      std::vector<float> out(len * ld_out, 12345.0F), outp(len * ld_out, 12345.0F);
      std::vector<float> scratch((dim + 4) * (len + 16));
      const float scale = 1.0F / std::sqrt(static_cast<float>(dim));
      const float *q = qkv.data(), *k = q + dim, *v = q + 2 * dim;
      detail::attend_head_neon(q, k, v, ld, len, dim, scale, out.data(), ld_out, scratch.data());
      detail::attend_head_portable(q, k, v, ld, len, dim, scale, outp.data(), ld_out, scratch.data());
      const auto want = attention_reference(q, k, v, ld, len, dim, double(scale));
      const std::string what = "dim=" + std::to_string(dim) + " len=" + std::to_string(len);
      for (std::size_t i = 0; i < len; ++i) {
        for (std::size_t d = 0; d < dim; ++d) {
          stat.error(std::fabs(double(out[i * ld_out + d]) - want[i * dim + d]), 2e-5, what);
          stat.portable(std::fabs(double(out[i * ld_out + d]) - double(outp[i * ld_out + d])));
        }
        for (std::size_t d = dim; d < ld_out; ++d) {
          if (out[i * ld_out + d] != 12345.0F) stat.error(1.0, 0.0, "wrote past the head, " + what);
        }
      }
    }
  }
  stat.report();

  // Through the dispatcher: packed sequences attend only within themselves.
  Stat packed_stat{"attention: packed = each sequence alone"};
  const AttentionShape shape{3, 8, 1.0F / std::sqrt(8.0F)};
  const std::size_t cols = shape.heads * shape.head_dim;
  const std::vector<std::size_t> offsets{0, 5, 6, 19};
  std::vector<float> qkv(offsets.back() * 3 * cols);
  for (auto& x : qkv) x = dist(rng);
  std::vector<float> packed(offsets.back() * cols);
  ThreadPool pool(2);
  attention(qkv.data(), 3 * cols, offsets, shape, packed.data(), cols, &pool);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t len = offsets[s + 1] - offsets[s];
    const std::vector<std::size_t> alone{0, len};
    std::vector<float> single(len * cols);
    attention(qkv.data() + offsets[s] * 3 * cols, 3 * cols, alone, shape, single.data(), cols);
    for (std::size_t i = 0; i < single.size(); ++i) {
      packed_stat.error(std::fabs(double(single[i]) - double(packed[offsets[s] * cols + i])), 0.0, "bitwise");
    }
  }
  packed_stat.report();
}

}  // namespace
}  // namespace warden::kernels

int main() {
  using namespace warden;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // what was checked shows even if a kernel crashes
  std::printf("active ISA: %s\n", std::string(isa_name(active_isa())).c_str());
  if (active_isa() != Isa::Neon) {
    std::printf("FAIL the dispatcher does not pick NEON on this machine\n");
    return 1;
  }
  kernels::check_math();
  kernels::check_gemm();
  kernels::check_layer_norm();
  kernels::check_attention();
  if (kernels::g_failures != 0) {
    std::printf("%d check(s) FAILED\n", kernels::g_failures);
    return 1;
  }
  std::printf("all NEON checks passed\n");
  return 0;
}

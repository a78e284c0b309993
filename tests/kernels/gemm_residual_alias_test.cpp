// C may alias the residual R exactly (x = x + f(x)·Wᵀ, every transformer block does it).
// With k longer than one k-block the driver must not let the first block's partial sums
// overwrite R before the epilogue reads it: the aliased result must equal the result with
// a separate R, bit for bit, on every ISA, with and without the pool.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm.hpp"

namespace warden::kernels {
namespace {

TEST(GemmResidualAlias, InPlaceResidualEqualsSeparateResidualForLongK) {
  std::vector<Isa> isas{Isa::Portable};
  if (cpu_features().avx2_fma) isas.push_back(Isa::Avx2);
  if (cpu_features().avx512) isas.push_back(Isa::Avx512);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  ThreadPool pool(2);
  for (const Isa isa : isas) {
    for (const std::size_t k : {std::size_t{200}, std::size_t{512}, std::size_t{1536}}) {
      for (const Activation act : {Activation::None, Activation::Relu}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          const std::size_t m = 101;
          const std::size_t n = 70;
          std::vector<float> a(m * k), w(n * k), b(n), r(m * n);
          for (auto* v : {&a, &w, &b, &r}) {
            for (float& x : *v) x = dist(rng);
          }
          const PackedLinear layer(w, n, k, b, isa);
          std::vector<float> separate(m * n);
          linear(a.data(), k, m, layer, separate.data(), n, {act, r.data(), n}, p);
          std::vector<float> in_place = r;
          linear(a.data(), k, m, layer, in_place.data(), n, {act, in_place.data(), n}, p);
          EXPECT_EQ(in_place, separate) << isa_name(isa) << " k=" << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace warden::kernels

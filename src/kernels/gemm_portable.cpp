// The portable micro-kernel: plain C++ the compiler vectorises for the baseline ISA. It
// is the reference the SIMD kernels are tested against and the path for CPUs without them.

#include <cmath>

#include "kernels/gemm_tile.hpp"

namespace warden::kernels::detail {

void tile_portable(const Tile& t) {
  constexpr std::size_t MR = kPortableMR;
  constexpr std::size_t NR = kPortableNR;
  float acc[MR][NR] = {};
  for (std::size_t k = 0; k < t.kc; ++k) {
    const float* a = t.a + k * MR;  // packed [kc][MR]
    const float* b = t.b + k * NR;  // packed [kc][NR]
    for (std::size_t r = 0; r < MR; ++r) {
      for (std::size_t j = 0; j < NR; ++j) acc[r][j] += a[r] * b[j];
    }
  }
  for (std::size_t r = 0; r < t.rows; ++r) {
    float* c = t.c + r * t.ldc;
    for (std::size_t j = 0; j < t.cols; ++j) {
      float v = acc[r][j];
      if (t.accumulate) v += c[j];
      if (t.finish) {
        v += t.bias[j];
        v = activate(v, t.activation);
        if (t.residual != nullptr) v += t.residual[r * t.ldr + j];
      }
      c[j] = v;
    }
  }
}

}  // namespace warden::kernels::detail

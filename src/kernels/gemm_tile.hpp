#pragma once
// The contract between the GEMM driver (gemm.cpp) and the per-ISA micro-kernels
// (gemm_<isa>.cpp). Plain pointers only: the ISA files are compiled with wider
// instruction sets, and sharing inline templates with them could leak those
// instructions into code that runs on any CPU.

#include <cstddef>
#include <functional>

#include "kernels/activation.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels::detail {

// One register tile: rows x cols of C (rows <= the kernel's MR, cols <= its NR), over the
// k-range [k0, k0 + kc) of a packed panel.
struct Tile {
  const float* a;  // A + row0*lda + k0
  std::size_t lda;
  const float* b;  // panel + k0*NR
  std::size_t kc;
  float* c;  // C + row0*ldc + col0
  std::size_t ldc;
  std::size_t rows;
  std::size_t cols;
  bool accumulate;    // add to C (not the first k-block)
  bool finish;        // last k-block: apply bias, activation, residual
  const float* bias;  // bias + col0 (finish only)
  Activation activation;
  const float* residual;  // residual + row0*ldr + col0, or null
  std::size_t ldr;
};

// Micro-kernel entry points; each handles any rows <= MR and cols <= NR.
inline constexpr std::size_t kPortableMR = 4, kPortableNR = 16;
inline constexpr std::size_t kAvx2MR = 6, kAvx2NR = 16;
inline constexpr std::size_t kAvx512MR = 12, kAvx512NR = 32;
inline constexpr std::size_t kNeonMR = 8, kNeonNR = 12;
void tile_portable(const Tile& t);
void tile_avx2(const Tile& t);
void tile_avx512(const Tile& t);
// Packs rows x kc of A (row stride lda) into tiles of [kc][kAvx512MR], zero-filling rows
// past `rows`: what gemm.cpp's pack_a does for mr = 12, vectorised.
void pack_a_avx512(const float* a, std::size_t lda, std::size_t rows, std::size_t kc, float* out);
// Packs kAvx512NR whole rows of W (k floats each, row-major) into one panel [k][kAvx512NR]:
// what PackedLinear::set_rows does for a full panel, vectorised.
void pack_panel_avx512(const float* w, std::size_t k, float* panel);
void tile_neon(const Tile& t);  // AArch64 only

// How a dense layer's work is cut into tasks for `threads` threads: mblocks row blocks x
// nblocks column blocks of panels_per_block panels each. Columns are split only when the
// rows alone give fewer than two tasks per thread. (Defined in gemm.cpp: not inline, so
// that no ISA-specific file can lend it its instructions.)
struct TaskGrid {
  std::size_t nblocks = 1;
  std::size_t panels_per_block = 0;
};
TaskGrid task_grid(std::size_t mblocks, std::size_t panels, std::size_t threads);

// The driver loop every dense layer shares (float32, bf16, int8): m rows in blocks of mc x
// `panels` column panels, cut by task_grid, run on the pool when there is one; body gets
// each non-empty task's [row_begin, row_end) x [panel_begin, panel_end).
using BlockFn = std::function<void(std::size_t row_begin, std::size_t row_end, std::size_t panel_begin,
                                   std::size_t panel_end)>;
void for_each_block(std::size_t m, std::size_t mc, std::size_t panels, ThreadPool* pool, const BlockFn& body);

// The scalar activation of the portable epilogues (exact erf GELU).
float activate(float v, Activation act) noexcept;

}  // namespace warden::kernels::detail

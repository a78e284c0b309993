#include "kernels/gemm_bf16.hpp"
#include "kernels/gemm_tile.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

namespace {

constexpr std::size_t kNr = detail::kBf16PanelWidth;
constexpr std::size_t kMr = detail::kBf16MR;
constexpr std::size_t kTilesPerBlock = 8;  // rows per task block, in row tiles

using TileFn = void (*)(const std::uint16_t*, std::size_t, std::size_t, const std::uint16_t*, std::size_t,
                        float*);

}  // namespace

namespace detail {

void bf16_round_row_portable(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst) {
  for (std::size_t i = 0; i < k; ++i) dst[i] = to_bf16(src[i]);
  std::fill(dst + k, dst + kp, std::uint16_t{0});
}

std::uint16_t to_bf16(float x) noexcept {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof(bits));
  // A NaN keeps its sign and top payload bits; setting the quiet bit keeps it from turning
  // into an infinity when the low payload bits are all that made it a NaN.
  if ((bits & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>((bits >> 16) | 0x0040U);
  // Round to nearest even: add just under half an ulp of bf16, plus the lsb that decides ties.
  // Finite values past the largest bf16 round to infinity, as they should.
  bits += 0x7FFFU + ((bits >> 16) & 1U);
  return static_cast<std::uint16_t>(bits >> 16);
}

float from_bf16(std::uint16_t h) noexcept {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float x = 0.0F;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

}  // namespace detail

Bf16Linear::Kernel Bf16Linear::kernel_for(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Amx && cpu_features().amx_bf16) return Kernel::Amx;
  if (has_avx512(isa) && cpu_features().avx512) {
    return cpu_features().avx512_bf16 ? Kernel::Avx512Bf16 : Kernel::Avx512;
  }
  if (isa == Isa::Avx2 && cpu_features().avx2_fma) return Kernel::Avx2;
#else
  (void)isa;
#endif
  return Kernel::Portable;
}

std::size_t Bf16Linear::depth_for(std::size_t k, Kernel kernel) {
  const std::size_t depth = kernel == Kernel::Amx ? detail::kBf16AmxDepth : 2;
  return (k + depth - 1) / depth * depth;
}

Bf16Linear::Bf16Linear(std::size_t n, std::size_t k, Isa isa, Arena* arena)
    : n_(n), k_(k), kp_(depth_for(k, kernel_for(isa))), isa_(isa), kernel_(kernel_for(isa)) {
  if (arena == nullptr) {
    own_ = Arena(arena_bytes(n, k, isa));
    arena = &own_;
  }
  const std::size_t columns = (n + kNr - 1) / kNr * kNr;
  panels_ = arena->take<std::uint16_t>(columns * kp_);
  bias_ = arena->take<float>(columns);
  if (arena->prefilled()) return;
  // Padding rows and columns must be zero; the setters write the rest.
  std::fill(panels_.begin(), panels_.end(), std::uint16_t{0});
  std::fill(bias_.begin(), bias_.end(), 0.0F);
}

std::size_t Bf16Linear::arena_bytes(std::size_t n, std::size_t k, Isa isa) {
  const std::size_t columns = (n + kNr - 1) / kNr * kNr;
  return Arena::footprint<std::uint16_t>(columns * depth_for(k, kernel_for(isa))) +
         Arena::footprint<float>(columns);
}

Bf16Linear::Bf16Linear(std::span<const float> weight, std::size_t n, std::size_t k,
                       std::span<const float> bias, Isa isa)
    : Bf16Linear(n, k, isa, nullptr) {
  set_weights(weight, bias);
}

Bf16Linear Bf16Linear::from_bf16(std::span<const std::uint16_t> weight, std::size_t n, std::size_t k,
                                 std::span<const float> bias, Isa isa) {
  Bf16Linear layer(n, k, isa, nullptr);
  layer.set_bf16_weights(weight, bias);
  return layer;
}

Bf16Linear Bf16Linear::panel_range(std::size_t first, std::size_t count) const {
  const std::size_t panels = (n_ + kNr - 1) / kNr;
  if (first > panels || count > panels - first) {
    throw Error(ErrorKind::Internal, "Bf16Linear::panel_range: past the last panel");
  }
  Bf16Linear view;
  view.n_ = std::min(n_ - std::min(n_, first * kNr), count * kNr);
  view.k_ = k_;
  view.kp_ = kp_;
  view.isa_ = isa_;
  view.kernel_ = kernel_;
  view.panels_ = panels_.subspan(first * kp_ * kNr, count * kp_ * kNr);
  view.bias_ = bias_.subspan(first * kNr, count * kNr);
  return view;
}

void Bf16Linear::set_weights(std::span<const float> weight, std::span<const float> bias) {
  if (weight.size() != n_ * k_) throw Error(ErrorKind::Internal, "Bf16Linear: sizes do not match the layer");
  std::vector<std::uint16_t> rounded(weight.size());
  std::transform(weight.begin(), weight.end(), rounded.begin(), detail::to_bf16);
  pack(rounded.data(), bias);
}

void Bf16Linear::set_bf16_weights(std::span<const std::uint16_t> weight, std::span<const float> bias) {
  if (weight.size() != n_ * k_) throw Error(ErrorKind::Internal, "Bf16Linear: sizes do not match the layer");
  pack(weight.data(), bias);
}

void Bf16Linear::pack(const std::uint16_t* weight, std::span<const float> bias) {
  if (!bias.empty() && bias.size() != n_) {
    throw Error(ErrorKind::Internal, "Bf16Linear: bias size does not match the layer");
  }
  std::copy(bias.begin(), bias.end(), bias_.begin());
  // A row of W is a column of a panel; each k-pair of it is one 32-bit lane of a line.
  for (std::size_t j = 0; j < n_; ++j) {
    const std::uint16_t* row = weight + j * k_;
    std::uint16_t* dst = panels_.data() + (j / kNr) * kp_ * kNr + (j % kNr) * 2;
    for (std::size_t i = 0; i < k_; ++i) dst[(i / 2) * kNr * 2 + i % 2] = row[i];
  }
}

void linear_bf16(const float* a, std::size_t lda, std::size_t m, const Bf16Linear& w, float* c,
                 std::size_t ldc, const Epilogue& epilogue, ThreadPool* pool) {
  if (m == 0 || w.n() == 0) return;
  const std::size_t n = w.n();
  const std::size_t k = w.k();
  const std::size_t kp = w.k_padded();
  TileFn tile = detail::bf16_tile_portable;
#if defined(__x86_64__)
  if (w.uses_avx512_bf16()) tile = detail::bf16_tile_avx512_bf16;
  if (w.uses_avx512()) tile = detail::bf16_tile_avx512;
  if (w.uses_avx2()) tile = detail::bf16_tile_avx2;
  if (w.uses_amx()) tile = detail::bf16_tile_amx;
#endif
  const KernelTable& kt = kernel_table();

  // Row tiles of the kernel's height; a block is a whole number of them (the AMX tile reads
  // whole 16-row groups of the rounded rows, which must therefore lie inside the buffer).
  const std::size_t mr = w.uses_amx() ? detail::kBf16AmxRows : kMr;
  const std::size_t mc = w.uses_amx() ? 2 * detail::kBf16AmxRows : kMr * kTilesPerBlock;
  const std::size_t panels = (n + kNr - 1) / kNr;
  // When all rows fit one block (a short query) the pool splits the columns, and every task
  // would round the same rows: the caller rounds them once instead, before the tasks start.
  const bool shared_rows = m <= mc && pool != nullptr;
  thread_local std::vector<std::uint16_t> caller_ba;
  if (shared_rows) {
    caller_ba.resize(mc * kp);
    for (std::size_t r = 0; r < m; ++r) kt.bf16_round_row(a + r * lda, k, kp, caller_ba.data() + r * kp);
  }
  const std::uint16_t* shared_ba = caller_ba.data();
  detail::for_each_block(
      m, mc, panels, pool,
      [&](std::size_t row_begin, std::size_t row_end, std::size_t p_begin, std::size_t p_end) {
        // Each row tile of A is rounded to bf16 (rows zero-padded to kp) just before its panels
        // run, into a small buffer (9 KB at k = 384) that stays in cache. Reading A is the one
        // part of the call bound by memory: at n = 384 it cost about a tenth of the time when
        // done up front. So while the panels of one row tile run, the next tile's rows of A are
        // prefetched, a slice per panel, and the read overlaps the arithmetic.
        // No k-blocking: the tile kernel alone holds ~510 GFLOP/s (one thread of the AMD EPYC
        // development VM) even at k = 1536 with the panels in L3, and splitting k or running
        // panel-major measured no faster at the bge-small shapes.
        thread_local std::vector<std::uint16_t> ba;
        ba.resize(mr * kp);
        const std::size_t lines_per_row = (k * sizeof(float) + 63) / 64;
        const std::size_t npanels = p_end - p_begin;
        alignas(64) float acc[detail::kBf16AmxRows * kNr];
        for (std::size_t r0 = row_begin; r0 < row_end; r0 += mr) {
          const std::size_t rows = std::min(mr, row_end - r0);
          const std::uint16_t* tile_a = ba.data();
          if (shared_rows) {
            tile_a = shared_ba + r0 * kp;
          } else {
            for (std::size_t r = 0; r < rows; ++r) {
              kt.bf16_round_row(a + (r0 + r) * lda, k, kp, ba.data() + r * kp);
            }
          }
          const std::size_t next_rows = r0 + mr < row_end ? std::min(mr, row_end - r0 - mr) : 0;
          const std::size_t next_lines = next_rows * lines_per_row;
          for (std::size_t p = p_begin; p < p_end; ++p) {
            // This panel's share of the next row tile's lines of A.
            const std::size_t i = p - p_begin;
            for (std::size_t l = i * next_lines / npanels; l < (i + 1) * next_lines / npanels; ++l) {
              const std::size_t row = r0 + mr + l / lines_per_row;
              __builtin_prefetch(a + row * lda + (l % lines_per_row) * 16);
            }
            tile(tile_a, kp, rows, w.panels() + p * kp * kNr, kp, acc);
            // No k-blocking: each element of C is written once, after its residual element is
            // read, so C may alias R element for element.
            const std::size_t col0 = p * kNr;
            const std::size_t cols = std::min(kNr, n - col0);
            const float* bias = w.bias() + col0;
            const float* res0 =
                epilogue.residual != nullptr ? epilogue.residual + r0 * epilogue.ldr + col0 : nullptr;
            if (kt.bf16_epilogue != nullptr) {
              kt.bf16_epilogue(acc, rows, cols, bias, epilogue.activation, res0, epilogue.ldr,
                               c + r0 * ldc + col0, ldc);
              continue;
            }
            for (std::size_t r = 0; r < rows; ++r) {
              float* out = c + (r0 + r) * ldc + col0;
              const float* res = res0 != nullptr ? res0 + r * epilogue.ldr : nullptr;
              for (std::size_t j = 0; j < cols; ++j) {
                float v = detail::activate(acc[r * kNr + j] + bias[j], epilogue.activation);
                if (res != nullptr) v += res[j];
                out[j] = v;
              }
            }
          }
        }
      });
}

namespace detail {

void bf16_tile_portable(const std::uint16_t* a, std::size_t lda, std::size_t rows, const std::uint16_t* panel,
                        std::size_t kp, float* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    // Per column: each k-pair's products summed, then added to the running sum, as vdpbf16ps
    // does (the products are exact in fp32; only the rounding of the sums can differ).
    float acc[kNr] = {};
    const std::uint16_t* ar = a + r * lda;
    for (std::size_t k2 = 0; k2 < kp; k2 += 2) {
      const float a0 = from_bf16(ar[k2]);
      const float a1 = from_bf16(ar[k2 + 1]);
      const std::uint16_t* b = panel + k2 * kNr;  // [kNr][2]
      for (std::size_t j = 0; j < kNr; ++j) acc[j] += a0 * from_bf16(b[2 * j]) + a1 * from_bf16(b[2 * j + 1]);
    }
    std::copy_n(acc, kNr, out + r * kNr);
  }
}

}  // namespace detail

}  // namespace warden::kernels

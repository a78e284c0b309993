#include "kernels/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm_tile.hpp"

namespace warden::kernels {

namespace {

// K is processed in blocks of KC so that one panel slice (KC x NR floats, 32 KB for
// AVX-512) stays in L1 while every row tile of the block streams past it.
constexpr std::size_t kKc = 256;
// Rows per task block, in row tiles: the packed A block (MC x KC) lives in L2.
constexpr std::size_t kTilesPerBlock = 8;

struct IsaKernel {
  std::size_t mr;
  std::size_t nr;
  void (*tile)(const detail::Tile&);
};

IsaKernel kernel_for(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::Avx512:
    case Isa::Amx:  // float32 products have no tile instruction: the AVX-512 kernel
      return {detail::kAvx512MR, detail::kAvx512NR, detail::tile_avx512};
    case Isa::Avx2:
      return {detail::kAvx2MR, detail::kAvx2NR, detail::tile_avx2};
#endif
#if defined(__aarch64__)
    case Isa::Neon:
      return {detail::kNeonMR, detail::kNeonNR, detail::tile_neon};
#endif
    default:
      return {detail::kPortableMR, detail::kPortableNR, detail::tile_portable};
  }
}

// Copies rows [0, rows) x cols [0, kc) of A into tiles of [kc][mr], zero-filling the rows
// of the last tile beyond `rows`, so the micro-kernel reads one contiguous stream.
void pack_a(const float* a, std::size_t lda, std::size_t rows, std::size_t kc, std::size_t mr, float* out) {
  for (std::size_t r0 = 0; r0 < rows; r0 += mr) {
    const std::size_t tile_rows = std::min(mr, rows - r0);
    const float* src = a + r0 * lda;
    // k outer, rows inner: the writes are one sequential stream, and the tile_rows source
    // lines being read stay in L1 across 16 consecutive k.
    for (std::size_t k = 0; k < kc; ++k) {
      float* dst = out + k * mr;
      std::size_t r = 0;
      for (; r < tile_rows; ++r) dst[r] = src[r * lda + k];
      for (; r < mr; ++r) dst[r] = 0.0F;
    }
    out += kc * mr;
  }
}

// Per-thread scratch for packed A, sized for the tallest kernel of any ISA (whichever this
// build dispatches to); allocated once per thread.
float* a_workspace() {
  static constexpr std::size_t kMaxMR =
      std::max({detail::kPortableMR, detail::kAvx2MR, detail::kAvx512MR, detail::kNeonMR});
  static constexpr std::size_t kFloats = kMaxMR * kTilesPerBlock * kKc;
  thread_local AlignedBuffer<float> buffer(kFloats);
  return buffer.data();
}

}  // namespace

namespace {

// Floats of the packed panels and of the padded bias of an n x k layer.
std::pair<std::size_t, std::size_t> packed_sizes(std::size_t n, std::size_t k, std::size_t nr) {
  const std::size_t panels = (n + nr - 1) / nr;
  return {panels * k * nr, panels * nr};
}

}  // namespace

std::size_t PackedLinear::panel_width_for(Isa isa) noexcept {
  return kernel_for(isa).nr;
}

std::size_t PackedLinear::arena_bytes(std::size_t n, std::size_t k, Isa isa) {
  const auto [panel_floats, bias_floats] = packed_sizes(n, k, kernel_for(isa).nr);
  return Arena::footprint<float>(panel_floats) + Arena::footprint<float>(bias_floats);
}

PackedLinear::PackedLinear(std::size_t n, std::size_t k, Isa isa, Arena* arena)
    : n_(n), k_(k), nr_(kernel_for(isa).nr), isa_(isa) {
  const auto [panel_floats, bias_floats] = packed_sizes(n, k, nr_);
  if (arena == nullptr) {
    own_ = Arena(arena_bytes(n, k, isa));
    arena = &own_;
  }
  panels_ = arena->take<float>(panel_floats);
  bias_ = arena->take<float>(bias_floats);
  if (arena->prefilled()) return;
  // Every real column is written by set_rows; the padding columns of the last panel are
  // multiplied (never stored) and must be zero, as must the bias until it is set.
  if (n % nr_ != 0) {
    float* last = panels_.data() + (panels_.size() - k * nr_);
    for (std::size_t kk = 0; kk < k; ++kk) {
      for (std::size_t c = n % nr_; c < nr_; ++c) last[kk * nr_ + c] = 0.0F;
    }
  }
  std::fill(bias_.begin(), bias_.end(), 0.0F);
}

PackedLinear::PackedLinear(std::span<const float> weight, std::size_t n, std::size_t k,
                           std::span<const float> bias, Isa isa)
    : PackedLinear(n, k, isa) {
  set_rows(0, n, weight, bias);
}

PackedLinear PackedLinear::panel_range(std::size_t first, std::size_t count) const {
  const std::size_t panels = (n_ + nr_ - 1) / nr_;
  if (first > panels || count > panels - first) {
    throw Error(ErrorKind::Internal, "PackedLinear::panel_range: past the last panel");
  }
  PackedLinear view;
  view.n_ = std::min(n_ - std::min(n_, first * nr_), count * nr_);
  view.k_ = k_;
  view.nr_ = nr_;
  view.isa_ = isa_;
  view.panels_ = panels_.subspan(first * k_ * nr_, count * k_ * nr_);
  view.bias_ = bias_.subspan(first * nr_, count * nr_);
  return view;
}

void PackedLinear::set_rows(std::size_t row0, std::size_t rows, std::span<const float> weight,
                            std::span<const float> bias) {
  if (row0 + rows > n_ || weight.size() != rows * k_ || (!bias.empty() && bias.size() != rows)) {
    throw Error(ErrorKind::Internal, "PackedLinear::set_rows: sizes do not match the layer");
  }
  // A row of W is a column of a packed panel. Walk each panel in its own (k-major) order so
  // that writes are sequential; the up-to-NR source rows being read stay in cache.
  for (std::size_t r = 0; r < rows;) {
    const std::size_t col = row0 + r;
    const std::size_t lane0 = col % nr_;
    const std::size_t lanes = std::min(nr_ - lane0, rows - r);
    float* panel = panels_.data() + (col / nr_) * k_ * nr_;
    const float* src = weight.data() + r * k_;
#if defined(__x86_64__)
    if (has_avx512(isa_) && cpu_features().avx512 && nr_ == detail::kAvx512NR && lane0 == 0 && lanes == nr_) {
      detail::pack_panel_avx512(src, k_, panel);
      for (std::size_t c = 0; c < lanes; ++c) bias_[col + c] = bias.empty() ? 0.0F : bias[r + c];
      r += lanes;
      continue;
    }
#endif
    for (std::size_t kk = 0; kk < k_; ++kk) {
      float* dst = panel + kk * nr_ + lane0;
      for (std::size_t c = 0; c < lanes; ++c) dst[c] = src[c * k_ + kk];
    }
    for (std::size_t c = 0; c < lanes; ++c) bias_[col + c] = bias.empty() ? 0.0F : bias[r + c];
    r += lanes;
  }
}

void linear(const float* a, std::size_t lda, std::size_t m, const PackedLinear& w, float* c, std::size_t ldc,
            const Epilogue& epilogue, ThreadPool* pool) {
  if (m == 0 || w.n() == 0) return;
  const IsaKernel kernel = kernel_for(w.isa());
  const std::size_t n = w.n();
  const std::size_t k = w.k();
  const std::size_t nr = kernel.nr;
  const std::size_t mr = kernel.mr;
  const std::size_t mc = mr * kTilesPerBlock;
  const std::size_t panels = (n + nr - 1) / nr;

  detail::for_each_block(
      m, mc, panels, pool,
      [&](std::size_t row0, std::size_t row_end, std::size_t p_begin, std::size_t p_end) {
        const std::size_t rows = row_end - row0;
        float* apack = a_workspace();
        // C may alias R (x = x + f(x)·Wᵀ). With more than one k-block the first block's partial
        // sums overwrite C before the last block adds R, so the task sets its slice of R aside
        // first; the result is then the same as with a separate R.
        const float* residual = epilogue.residual;
        std::size_t ldr = epilogue.ldr;
        std::size_t res_col0 = 0;  // column of C that residual[row][0] belongs to
        std::size_t res_row0 = 0;
        if (residual != nullptr && residual == c && k > kKc) {
          thread_local std::vector<float> saved;
          const std::size_t col_begin = p_begin * nr;
          const std::size_t width = std::min(n, p_end * nr) - std::min(n, col_begin);
          saved.resize(rows * width);
          for (std::size_t r = 0; r < rows; ++r) {
            std::copy_n(epilogue.residual + (row0 + r) * epilogue.ldr + col_begin, width,
                        saved.data() + r * width);
          }
          residual = saved.data();
          ldr = width;
          res_col0 = col_begin;
          res_row0 = row0;
        }
        auto residual_at = [&](std::size_t row, std::size_t col) -> const float* {
          return residual != nullptr ? residual + (row - res_row0) * ldr + (col - res_col0) : nullptr;
        };
        if (k == 0) {  // degenerate: C = act(b) (+ R); run one empty k-block
          for (std::size_t p = p_begin; p < p_end; ++p) {
            for (std::size_t r0 = 0; r0 < rows; r0 += mr) {
              const detail::Tile t{apack,
                                   mr,
                                   w.panels(),
                                   0,
                                   c + (row0 + r0) * ldc + p * nr,
                                   ldc,
                                   std::min(mr, rows - r0),
                                   std::min(nr, n - p * nr),
                                   false,
                                   true,
                                   w.bias() + p * nr,
                                   epilogue.activation,
                                   residual_at(row0 + r0, p * nr),
                                   ldr};
              kernel.tile(t);
            }
          }
          return;
        }
        for (std::size_t k0 = 0; k0 < k; k0 += kKc) {
          const std::size_t kc = std::min(kKc, k - k0);
#if defined(__x86_64__)
          if (has_avx512(w.isa())) {
            detail::pack_a_avx512(a + row0 * lda + k0, lda, rows, kc, apack);
          } else {
            pack_a(a + row0 * lda + k0, lda, rows, kc, mr, apack);
          }
#else
          pack_a(a + row0 * lda + k0, lda, rows, kc, mr, apack);
#endif
          const bool first = k0 == 0;
          const bool last = k0 + kc == k;
          for (std::size_t p = p_begin; p < p_end; ++p) {
            const float* panel = w.panels() + p * k * nr + k0 * nr;
            const std::size_t col0 = p * nr;
            const std::size_t cols = std::min(nr, n - col0);
            for (std::size_t r0 = 0, tile = 0; r0 < rows; r0 += mr, ++tile) {
              const std::size_t row = row0 + r0;
              const detail::Tile t{
                  apack + tile * kc * mr,  mr,   panel,  kc,   c + row * ldc + col0, ldc,
                  std::min(mr, rows - r0), cols, !first, last, w.bias() + col0,      epilogue.activation,
                  residual_at(row, col0),  ldr};
              kernel.tile(t);
            }
          }
        }
      });
}

namespace detail {

void for_each_block(std::size_t m, std::size_t mc, std::size_t panels, ThreadPool* pool,
                    const BlockFn& body) {
  const std::size_t mblocks = (m + mc - 1) / mc;
  const TaskGrid grid = task_grid(mblocks, panels, pool != nullptr ? pool->threads_now() : 1);
  auto run_task = [&](std::size_t task) {
    const std::size_t row_begin = task / grid.nblocks * mc;
    const std::size_t p_begin = task % grid.nblocks * grid.panels_per_block;
    const std::size_t p_end = std::min(panels, p_begin + grid.panels_per_block);
    if (p_begin >= p_end) return;  // the column split can leave the last blocks empty
    body(row_begin, std::min(m, row_begin + mc), p_begin, p_end);
  };
  const std::size_t tasks = mblocks * grid.nblocks;
  parallel_for(pool, tasks, run_task);
}

float activate(float v, Activation act) noexcept {
  switch (act) {
    case Activation::None:
      return v;
    case Activation::Gelu:
      return 0.5F * v * (1.0F + std::erf(v * 0.70710678118654752F));
    case Activation::Relu:
      return v > 0.0F ? v : 0.0F;
    case Activation::Tanh:
      return std::tanh(v);
    case Activation::Silu:
      return v / (1.0F + std::exp(-v));
    case Activation::GeluTanh:
      return 0.5F * v * (1.0F + std::tanh(0.7978845608028654F * (v + 0.044715F * v * v * v)));
  }
  return v;
}

TaskGrid task_grid(std::size_t mblocks, std::size_t panels, std::size_t threads) {
  // Enough tasks for every thread to have work: split the columns when rows are few.
  TaskGrid g;
  while (mblocks * g.nblocks < 2 * threads && g.nblocks < panels) g.nblocks *= 2;
  g.nblocks = std::min(g.nblocks, panels);
  g.panels_per_block = (panels + g.nblocks - 1) / g.nblocks;
  return g;
}

}  // namespace detail

}  // namespace warden::kernels

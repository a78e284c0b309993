#include "kernels/gemm_int8.hpp"
#include "kernels/gemm_tile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

namespace {

constexpr std::size_t kNr = detail::kInt8PanelWidth;
constexpr std::size_t kMr = detail::kInt8MR;
constexpr std::size_t kTilesPerBlock = 8;  // rows per task block, in row tiles

// round-to-nearest-even of x · inv_scale clamped to [-127, 127]. Adding and subtracting
// 1.5 · 2^23 rounds any |v| < 2^22 to an integer in the default rounding mode: the same
// result as nearbyint, but the loop vectorises with baseline SSE2 (nearbyint is a libm
// call there). The clamp comes first so that the magic-number trick is always in range.
inline std::int8_t quantize(float x, float inv_scale) {
  constexpr float kMagic = 12582912.0F;
  const float v = std::clamp(x * inv_scale, -127.0F, 127.0F);
  return static_cast<std::int8_t>(static_cast<int>((v + kMagic) - kMagic));
}

}  // namespace

namespace detail {

float int8_quantize_row_portable(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst) {
  float max_abs = 0.0F;
  bool finite = true;
  for (std::size_t i = 0; i < k; ++i) {
    max_abs = std::max(max_abs, std::fabs(src[i]));
    finite = finite && std::isfinite(src[i]);  // std::max would skip a NaN
  }
  if (!(max_abs > 0.0F) || !finite) {
    // All zero (scale 0: the row contributes nothing) — or not finite, which int8 cannot
    // represent; the row is then treated as zero rather than producing undefined casts.
    std::fill_n(dst, kp, std::int8_t{0});
    return 0.0F;
  }
  // Capped: below max|x| ~ 3.7e-37, 127 / max|x| is inf and 0 · inf a NaN, which the SIMD
  // clamps and a float-to-int cast would each treat differently. Every quantiser caps it.
  const float inv = std::min(127.0F / max_abs, std::numeric_limits<float>::max());
  for (std::size_t i = 0; i < k; ++i) dst[i] = quantize(src[i], inv);
  std::fill(dst + k, dst + kp, std::int8_t{0});
  return max_abs / 127.0F;
}

}  // namespace detail

namespace {

using TileFn = void (*)(const std::int8_t*, std::size_t, std::size_t, const std::int8_t*, std::size_t,
                        const std::int32_t*, std::int32_t*);

#if defined(__x86_64__)
// The AMX tile behind TileFn's signature (it needs no column sums: both operands are signed).
void amx_tile(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
              std::size_t kp, const std::int32_t* /*sums*/, std::int32_t* out) {
  detail::int8_tile_amx(a, lda, rows, panel, kp, out);
}
#endif

}  // namespace

QuantizedRows quantize_rows(std::span<const float> weight, std::size_t n, std::size_t k) {
  if (weight.size() != n * k) throw Error(ErrorKind::Internal, "quantize_rows: sizes do not match the layer");
  QuantizedRows out{std::vector<std::int8_t>(n * k), std::vector<float>(n)};
  for (std::size_t j = 0; j < n; ++j) {
    const float* row = weight.data() + j * k;
    float max_abs = 0.0F;
    bool finite = true;
    for (std::size_t i = 0; i < k; ++i) {
      max_abs = std::max(max_abs, std::fabs(row[i]));
      finite = finite && std::isfinite(row[i]);
    }
    if (!finite) throw Error(ErrorKind::CorruptFile, fmt::format("weight row {} is not finite", j));
    const float scale = max_abs / 127.0F;
    // All zero, or so small (below ~1.6e-43) that the scale underflows to 0 and w / scale
    // would be NaN: scale 0, values 0 (found by warden-fuzz-model).
    if (!(scale > 0.0F)) continue;
    std::int8_t* q = out.values.data() + j * k;
    for (std::size_t i = 0; i < k; ++i) {
      q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(row[i] / scale), -127.0F, 127.0F));
    }
    out.scales[j] = scale;
  }
  return out;
}

QuantizedLinear::QuantizedLinear(std::span<const float> weight, std::size_t n, std::size_t k,
                                 std::span<const float> bias, Isa isa)
    : QuantizedLinear(quantize_rows(weight, n, k), n, k, bias, isa) {}

QuantizedLinear::QuantizedLinear(const QuantizedRows& rows, std::size_t n, std::size_t k,
                                 std::span<const float> bias, Isa isa)
    : QuantizedLinear(n, k, isa, nullptr) {
  set_rows(rows, bias);
}

namespace {

Int8Kernel int8_kernel_for(Isa isa) {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (isa == Isa::Amx && cpu.amx_int8) return Int8Kernel::Amx;
  if (has_avx512(isa) && cpu.avx512 && cpu.avx512_vnni) return Int8Kernel::Avx512Vnni;
  if ((has_avx512(isa) && cpu.avx512) || (isa == Isa::Avx2 && cpu.avx2_fma)) return Int8Kernel::Avx2;
#else
  (void)isa;
#endif
  return Int8Kernel::Portable;
}

// The packed depth of k for a kernel.
std::size_t int8_depth(std::size_t k, Int8Kernel kernel) {
  const std::size_t depth = kernel == Int8Kernel::Amx ? detail::kInt8AmxDepth : 4;
  return (k + depth - 1) / depth * depth;
}

}  // namespace

std::size_t QuantizedLinear::arena_bytes(std::size_t n, std::size_t k, Isa isa) {
  const std::size_t columns = (n + kNr - 1) / kNr * kNr;
  return Arena::footprint<std::int8_t>(columns * int8_depth(k, int8_kernel_for(isa))) +
         2 * Arena::footprint<float>(columns) + Arena::footprint<std::int32_t>(columns);
}

QuantizedLinear::QuantizedLinear(std::size_t n, std::size_t k, Isa isa, Arena* arena)
    : n_(n), k_(k), kp_(int8_depth(k, int8_kernel_for(isa))), isa_(isa), kernel_(int8_kernel_for(isa)) {
  if (arena == nullptr) {
    own_ = Arena(arena_bytes(n, k, isa));
    arena = &own_;
  }
  const std::size_t columns = (n + kNr - 1) / kNr * kNr;
  panels_ = arena->take<std::int8_t>(columns * kp_);
  scales_ = arena->take<float>(columns);
  bias_ = arena->take<float>(columns);
  sums_ = arena->take<std::int32_t>(columns);
  if (arena->prefilled()) return;
  // Padding rows and columns must be zero; set_rows writes the rest.
  std::fill(panels_.begin(), panels_.end(), std::int8_t{0});
  std::fill(scales_.begin(), scales_.end(), 0.0F);
  std::fill(bias_.begin(), bias_.end(), 0.0F);
  std::fill(sums_.begin(), sums_.end(), 0);
}

QuantizedLinear QuantizedLinear::panel_range(std::size_t first, std::size_t count) const {
  const std::size_t panels = (n_ + kNr - 1) / kNr;
  if (first > panels || count > panels - first) {
    throw Error(ErrorKind::Internal, "QuantizedLinear::panel_range: past the last panel");
  }
  QuantizedLinear view;
  view.n_ = std::min(n_ - std::min(n_, first * kNr), count * kNr);
  view.k_ = k_;
  view.kp_ = kp_;
  view.isa_ = isa_;
  view.kernel_ = kernel_;
  view.panels_ = panels_.subspan(first * kp_ * kNr, count * kp_ * kNr);
  view.scales_ = scales_.subspan(first * kNr, count * kNr);
  view.bias_ = bias_.subspan(first * kNr, count * kNr);
  view.sums_ = sums_.subspan(first * kNr, count * kNr);
  return view;
}

void QuantizedLinear::set_rows(const QuantizedRows& rows, std::span<const float> bias) {
  const std::size_t n = n_;
  const std::size_t k = k_;
  if (rows.values.size() != n * k || rows.scales.size() != n || (!bias.empty() && bias.size() != n)) {
    throw Error(ErrorKind::Internal, "QuantizedLinear: sizes do not match the layer");
  }
  for (std::size_t j = 0; j < n; ++j) {
    const std::int8_t* q = rows.values.data() + j * k;
    std::int8_t* panel = panels_.data() + (j / kNr) * kp_ * kNr;
    const std::size_t lane = j % kNr;
    std::int32_t sum = 0;
    for (std::size_t i = 0; i < k; ++i) {
      // -128 has no symmetric counterpart and would overflow the VNNI offset correction's
      // assumptions; a checkpoint holding one is clamped like a freshly quantised row.
      const std::int8_t v = std::max<std::int8_t>(q[i], -127);
      panel[(i / 4) * kNr * 4 + lane * 4 + i % 4] = v;
      sum += v;
    }
    const float scale = rows.scales[j];
    if (!std::isfinite(scale) || scale < 0.0F) {
      throw Error(ErrorKind::CorruptFile, fmt::format("int8 weight scale {} of row {} is invalid", scale, j));
    }
    scales_.data()[j] = scale;
    bias_.data()[j] = bias.empty() ? 0.0F : bias[j];
    sums_.data()[j] = sum;
  }
}

void linear_int8(const float* a, std::size_t lda, std::size_t m, const QuantizedLinear& w, float* c,
                 std::size_t ldc, const Epilogue& epilogue, ThreadPool* pool) {
  if (m == 0 || w.n() == 0) return;
  const std::size_t n = w.n();
  const std::size_t k = w.k();
  const std::size_t kp = w.k_padded();
  TileFn tile = detail::int8_tile_portable;
#if defined(__x86_64__)
  if (w.kernel() == Int8Kernel::Avx512Vnni) tile = detail::int8_tile_avx512_vnni;
  if (w.kernel() == Int8Kernel::Avx2) tile = detail::int8_tile_avx2;
  if (w.kernel() == Int8Kernel::Amx) {
    tile = amx_tile;
  }
#endif
  // The float code follows the machine, not the layer (see the header).
  const KernelTable& kt = kernel_table();

  // Row tiles of the kernel's height; a block is a whole number of them (the AMX tile reads
  // whole 16-row groups of the quantised rows, which must therefore lie inside the block's buffer).
  const std::size_t mr = w.kernel() == Int8Kernel::Amx          ? detail::kInt8AmxRows
                         : w.kernel() == Int8Kernel::Avx512Vnni ? detail::kInt8VnniMR
                                                                : kMr;
  const std::size_t mc = w.kernel() == Int8Kernel::Amx ? 2 * detail::kInt8AmxRows : mr * kTilesPerBlock;
  // Dynamic per-row quantisation of A, by each task for its own rows just before it uses
  // them: the int8 rows and scales are still in cache when the tiles read them, and no
  // separate pass (nor its barrier) is needed. When the rows are few (a short query), the
  // pool splits the columns too and several tasks would quantise the same rows: then they
  // are quantised once, before the tasks start — by the caller when they fit one block (a
  // microsecond at 16 x 384), else as a parallel pass of its own. Done by each task it had
  // been a sixth of a 1 x 16 forward pass.
  const bool offset_rows = w.kernel() == Int8Kernel::Avx512Vnni;
  auto quantize_rows_of = [&](std::size_t row_begin, std::size_t row_end, std::int8_t* qa, float* scales) {
    for (std::size_t r = row_begin; r < row_end; ++r) {
      std::int8_t* dst = qa + (r - row_begin) * kp;
      float& scale = scales[r - row_begin];
      scale = kt.int8_quantize_row(a + r * lda, k, kp, dst);
      if (offset_rows) detail::int8_offset_row(dst, kp);
    }
  };

  const std::size_t panels = (n + kNr - 1) / kNr;
  const std::size_t mblocks = (m + mc - 1) / mc;
  const bool shared_rows =
      pool != nullptr && detail::task_grid(mblocks, panels, pool->threads_now()).nblocks > 1;
  thread_local std::vector<std::int8_t> caller_qa;
  thread_local std::vector<float> caller_scales;
  if (shared_rows) {
    caller_qa.resize(mblocks * mc * kp);  // whole blocks: the AMX tile reads 16-row groups
    caller_scales.resize(mblocks * mc);
    // (Pointers, not the thread_local names: a worker naming them would get its own.)
    std::int8_t* all_qa = caller_qa.data();
    float* all_scales = caller_scales.data();
    if (mblocks == 1) {
      quantize_rows_of(0, m, all_qa, all_scales);
    } else {
      pool->parallel_for(mblocks, [&](std::size_t b) {
        const std::size_t begin = b * mc;
        quantize_rows_of(begin, std::min(m, begin + mc), all_qa + begin * kp, all_scales + begin);
      });
    }
  }
  const std::int8_t* shared_qa = caller_qa.data();
  const float* shared_scales = caller_scales.data();
  detail::for_each_block(
      m, mc, panels, pool,
      [&](std::size_t row_begin, std::size_t row_end, std::size_t p_begin, std::size_t p_end) {
        thread_local std::vector<std::int8_t> own_qa;
        thread_local std::vector<float> own_scales;
        const std::int8_t* qa = nullptr;
        const float* row_scales = nullptr;
        if (shared_rows) {
          qa = shared_qa + row_begin * kp;
          row_scales = shared_scales + row_begin;
        } else {
          own_qa.resize(mc * kp);
          own_scales.resize(mc);
          quantize_rows_of(row_begin, row_end, own_qa.data(), own_scales.data());
          qa = own_qa.data();
          row_scales = own_scales.data();
        }
        alignas(64) std::int32_t acc[detail::kInt8AmxRows * kNr];
        // Row tile outer: its quantised A (mr x kp bytes) stays in L1 while the panels
        // stream from L2.
        for (std::size_t r0 = row_begin; r0 < row_end; r0 += mr) {
          const std::size_t rows = std::min(mr, row_end - r0);
          for (std::size_t p = p_begin; p < p_end; ++p) {
            const std::int8_t* panel = w.panels() + p * kp * kNr;
            const std::size_t col0 = p * kNr;
            const std::size_t cols = std::min(kNr, n - col0);
            const float* col_scale = w.scales() + col0;
            const float* bias = w.bias() + col0;
            const std::size_t local = r0 - row_begin;  // the tile's first row in this block
            tile(qa + local * kp, kp, rows, panel, kp, w.sums() + col0, acc);
            // Epilogue, shared by every kernel (so all of them give the same floats): dequantise,
            // bias, activation, residual. C may alias R element for element.
            const float* res0 =
                epilogue.residual != nullptr ? epilogue.residual + r0 * epilogue.ldr + col0 : nullptr;
            if (kt.int8_epilogue != nullptr) {
              kt.int8_epilogue(acc, rows, cols, row_scales + local, col_scale, bias, epilogue.activation,
                               res0, epilogue.ldr, c + r0 * ldc + col0, ldc);
              continue;
            }
            for (std::size_t r = 0; r < rows; ++r) {
              const float rs = row_scales[local + r];
              float* out = c + (r0 + r) * ldc + col0;
              const float* res = res0 != nullptr ? res0 + r * epilogue.ldr : nullptr;
              for (std::size_t j = 0; j < cols; ++j) {
                float v = static_cast<float>(acc[r * kNr + j]) * (rs * col_scale[j]) + bias[j];
                v = detail::activate(v, epilogue.activation);
                if (res != nullptr) v += res[j];
                out[j] = v;
              }
            }
          }
        }
      });
}

namespace detail {

void int8_offset_row(std::int8_t* row, std::size_t kp) {
  // Bytes as unsigned: x ^ 0x80 == x + 128 for every int8 x. Plain bytes, so the compiler
  // vectorises it with the baseline ISA.
  auto* bytes = reinterpret_cast<unsigned char*>(row);
  for (std::size_t i = 0; i < kp; ++i) bytes[i] ^= 0x80U;
}

void int8_tile_portable(const std::int8_t* a, std::size_t lda, std::size_t rows, const std::int8_t* panel,
                        std::size_t kp, const std::int32_t* /*sums*/, std::int32_t* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::int32_t acc[kNr] = {};
    const std::int8_t* ar = a + r * lda;
    for (std::size_t k4 = 0; k4 < kp; k4 += 4) {
      const std::int8_t* b = panel + k4 * kNr;  // [kNr][4]
      for (std::size_t j = 0; j < kNr; ++j) {
        for (std::size_t t = 0; t < 4; ++t) acc[j] += std::int32_t{ar[k4 + t]} * std::int32_t{b[j * 4 + t]};
      }
    }
    std::copy_n(acc, kNr, out + r * kNr);
  }
}

}  // namespace detail

}  // namespace warden::kernels

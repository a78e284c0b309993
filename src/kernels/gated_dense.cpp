#include "kernels/gated_dense.hpp"

#include <algorithm>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/gemm_tile.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

namespace {

// Rows per task, and the widest column range of one task: the scratch block (rows x 2·cols
// floats, 192 KiB) stays in L2 between the product and the gate.
constexpr std::size_t kRowsPerTask = 96;
constexpr std::size_t kMaxColumnsPerTask = 256;

// Each half padded to whole panels of the layer, so that both start on a panel.
std::size_t padded_half(std::size_t width, Precision precision, Isa isa) {
  const std::size_t panel = DenseLayer::panel_width_for(precision, isa);
  return (width + panel - 1) / panel * panel;
}

}  // namespace

GatedDense GatedDense::make(Precision precision, std::span<const float> activated,
                            std::span<const float> gate, std::size_t width, std::size_t k,
                            std::span<const float> activated_bias, std::span<const float> gate_bias, Isa isa,
                            Arena* arena) {
  if (activated.size() != width * k || gate.size() != width * k ||
      (!activated_bias.empty() && activated_bias.size() != width) ||
      (!gate_bias.empty() && gate_bias.size() != width)) {
    throw Error(ErrorKind::Internal, "GatedDense: sizes do not match the layer");
  }
  const std::size_t half = padded_half(width, precision, isa);
  std::vector<float> weight(2 * half * k, 0.0F);
  std::vector<float> bias(2 * half, 0.0F);
  std::copy(activated.begin(), activated.end(), weight.begin());
  std::copy(gate.begin(), gate.end(), weight.begin() + static_cast<std::ptrdiff_t>(half * k));
  std::copy(activated_bias.begin(), activated_bias.end(), bias.begin());
  std::copy(gate_bias.begin(), gate_bias.end(), bias.begin() + static_cast<std::ptrdiff_t>(half));
  return {DenseLayer::make(precision, weight, 2 * half, k, bias, isa, arena), width, half};
}

GatedDense GatedDense::prefilled(Precision precision, std::size_t width, std::size_t k, Isa isa,
                                 Arena& arena) {
  const std::size_t half = padded_half(width, precision, isa);
  return {DenseLayer::prefilled(precision, 2 * half, k, isa, arena), width, half};
}

std::size_t GatedDense::arena_bytes(Precision precision, std::size_t width, std::size_t k, Isa isa) {
  return DenseLayer::arena_bytes(precision, 2 * padded_half(width, precision, isa), k, isa);
}

void gated_dense(const float* a, std::size_t lda, std::size_t m, const GatedDense& w, Activation act,
                 float* c, std::size_t ldc, ThreadPool* pool) {
  const std::size_t width = w.width();
  if (m == 0 || width == 0) return;
  const DenseLayer& product = w.product();
  const std::size_t panel = product.panel_width();
  const std::size_t half_panels = w.half() / panel;
  // Column groups: as wide as the scratch allows, and narrower when the rows alone leave a
  // thread idle (a short query is one row block).
  const std::size_t mblocks = (m + kRowsPerTask - 1) / kRowsPerTask;
  const detail::TaskGrid grid =
      detail::task_grid(mblocks, half_panels, pool != nullptr ? pool->threads_now() : 1);
  const std::size_t group_panels =
      std::min(grid.panels_per_block, std::max<std::size_t>(1, kMaxColumnsPerTask / panel));
  const std::size_t groups = (half_panels + group_panels - 1) / group_panels;
  const auto glu = kernel_table().glu_rows;
  auto task = [&](std::size_t t) {
    const std::size_t row0 = t / groups * kRowsPerTask;
    const std::size_t rows = std::min(kRowsPerTask, m - row0);
    const std::size_t p0 = t % groups * group_panels;
    const std::size_t count = std::min(group_panels, half_panels - p0);
    const std::size_t col0 = p0 * panel;
    if (col0 >= width) return;  // a group of padding only
    const std::size_t cols = count * panel;
    thread_local AlignedBuffer<float> scratch;
    if (scratch.size() < kRowsPerTask * 2 * cols) scratch = AlignedBuffer<float>(kRowsPerTask * 2 * cols);
    float* s = scratch.data();
    // Both halves of these columns, one task's rows, on this thread (no pool: the task is
    // the unit of parallelism here).
    dense(a + row0 * lda, lda, rows, product.panel_range(p0, count), s, 2 * cols);
    dense(a + row0 * lda, lda, rows, product.panel_range(half_panels + p0, count), s + cols, 2 * cols);
    glu(s, s + cols, 2 * cols, rows, std::min(cols, width - col0), act, c + row0 * ldc + col0, ldc);
  };
  parallel_for(pool, mblocks * groups, task);
}

namespace detail {

void glu_rows_portable(const float* x, const float* gate, std::size_t ldx, std::size_t rows,
                       std::size_t width, Activation act, float* out, std::size_t ldo) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* a = x + r * ldx;
    float* o = out + r * ldo;
    if (gate == nullptr) {
      for (std::size_t j = 0; j < width; ++j) o[j] = activate(a[j], act);
      continue;
    }
    const float* g = gate + r * ldx;
    for (std::size_t j = 0; j < width; ++j) o[j] = activate(a[j], act) * g[j];
  }
}

}  // namespace detail

}  // namespace warden::kernels

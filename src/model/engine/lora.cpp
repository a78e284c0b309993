#include "model/engine/lora.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/row_projection.hpp"

namespace warden::model::engine {

namespace {

// Products of fewer rows run on the calling thread: waking the pool costs more than they do.
constexpr std::size_t kPooledRows = 64;

}  // namespace

std::size_t LoraLinear::bytes() const noexcept {
  std::size_t n = down.size() * sizeof(float);
  for (const auto& u : up) n += u.bytes();
  return n;
}

void LoraTable::add(std::size_t task, std::uint32_t row, float* out) const {
  const float* coef = a.data() + (task * rows + row) * rank;
  const float* basis = b.data() + task * rank * width;
  for (std::size_t r = 0; r < rank; ++r) {
    const float c = coef[r];
    const float* br = basis + r * width;
    for (std::size_t j = 0; j < width; ++j) out[j] += c * br[j];
  }
}

LoraLinear make_lora_linear(std::span<const float> a, std::span<const float> b, std::size_t tasks,
                            std::size_t rank, std::size_t in, std::size_t out, float scale) {
  if (a.size() != tasks * rank * in || b.size() != tasks * out * rank) {
    throw Error(ErrorKind::Internal, "LoRA matrices of the wrong size");
  }
  LoraLinear l;
  l.rank = rank;
  l.in = in;
  l.down.assign(a.begin(), a.end());
  for (float& v : l.down) v *= scale;
  for (std::size_t t = 0; t < tasks; ++t) {
    l.up.push_back(
        kernels::DenseLayer::make(Precision::Float32, b.subspan(t * out * rank, out * rank), out, rank, {}));
  }
  return l;
}

LoraTable make_lora_table(std::span<const float> a, std::span<const float> b, std::size_t tasks,
                          std::size_t rank, std::size_t rows, std::size_t width, float scale) {
  if (a.size() != tasks * rows * rank || b.size() != tasks * rank * width) {
    throw Error(ErrorKind::Internal, "LoRA matrices of the wrong size");
  }
  LoraTable t{tasks,
              rows,
              rank,
              width,
              std::vector<float>(a.begin(), a.end()),
              std::vector<float>(b.begin(), b.end())};
  for (float& v : t.a) v *= scale;
  return t;
}

void add_lora(const float* a, std::size_t lda, const TokenBatch& batch, const LoraLinear& lora, float* c,
              std::size_t ldc, float* scratch, ThreadPool* pool) {
  if (lora.empty() || batch.adapters.empty()) return;
  const std::size_t n = batch.sequences();
  const std::size_t rank = lora.rank;
  for (std::size_t s = 0; s < n;) {
    const std::int32_t task = batch.adapter(s);
    std::size_t end = s + 1;
    while (end < n && batch.adapter(end) == task) ++end;
    if (task != TokenBatch::kNoAdapter) {
      const auto t = static_cast<std::size_t>(task);
      const std::size_t row0 = batch.offsets[s];
      const std::size_t rows = batch.offsets[end] - row0;
      const float* down = lora.down.data() + t * rank * lora.in;
      const float* in = a + row0 * lda;
      float* u = scratch + row0 * rank;
      if (rows < kPooledRows || pool == nullptr) {
        kernels::project_rows(in, lda, rows, lora.in, down, rank, u, rank);
      } else {
        const std::size_t blocks = (rows + kPooledRows - 1) / kPooledRows;
        parallel_for(pool, blocks, [&](std::size_t b) {
          const std::size_t r0 = b * kPooledRows;
          const std::size_t count = std::min(kPooledRows, rows - r0);
          kernels::project_rows(in + r0 * lda, lda, count, lora.in, down, rank, u + r0 * rank, rank);
        });
      }
      float* out = c + row0 * ldc;
      kernels::dense(u, rank, rows, lora.up[t], out, ldc, {kernels::Activation::None, out, ldc},
                     rows >= kPooledRows ? pool : nullptr);
    }
    s = end;
  }
}

}  // namespace warden::model::engine

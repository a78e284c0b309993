#pragma once
// Task adapters (LoRA) applied on the fly, per sequence: for task t a layer's weight is
// W + scale · B_t·A_t (jina-embeddings-v3's LoRAParametrization), computed here as
// x·Wᵀ + (x·(scale·A_t)ᵀ)·B_tᵀ: two rank-r products per layer instead of a merged copy of the
// weights per task (r = 4 against 1,024-wide layers: under 1% of the layer's work, and no
// memory beyond the adapters themselves). Sequences without a task run the base weights.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/dense.hpp"
#include "model/engine/token_batch.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::engine {

// One nn.Linear's adapters, float32 whatever the model's precision: per task, down = scale·A_t
// [rank x in] (row-major: kernels/row_projection.hpp's few dot products per row, as narrow a
// product costing the GEMM a whole 32-column panel) and up = B_t [out x rank], a packed layer.
// Empty: the layer has none.
struct LoraLinear {
  std::vector<float> down;  // [tasks][rank][in]
  std::vector<kernels::DenseLayer> up;
  std::size_t rank = 0;
  std::size_t in = 0;

  [[nodiscard]] bool empty() const noexcept { return up.empty(); }
  [[nodiscard]] std::size_t tasks() const noexcept { return up.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept;
};

// An nn.Embedding's adapters: row `row` of task t gains scale · A_t[row] · B_t, with A_t
// [rows x rank] and B_t [rank x width] (the embedding layout: fan_in is the vocabulary).
struct LoraTable {
  std::size_t tasks = 0, rows = 0, rank = 0, width = 0;
  std::vector<float> a;  // [tasks][rows][rank], scale folded in
  std::vector<float> b;  // [tasks][rank][width]

  [[nodiscard]] bool empty() const noexcept { return tasks == 0; }
  [[nodiscard]] std::size_t bytes() const noexcept { return (a.size() + b.size()) * sizeof(float); }
  // out[0..width) += scale · A_task[row] · B_task.
  void add(std::size_t task, std::uint32_t row, float* out) const;
};

// Builds a layer's adapters from A [tasks x rank x in] and B [tasks x out x rank] (row-major,
// as the checkpoint stores them).
LoraLinear make_lora_linear(std::span<const float> a, std::span<const float> b, std::size_t tasks,
                            std::size_t rank, std::size_t in, std::size_t out, float scale);
// Builds a table's adapters from A [tasks x rows x rank] and B [tasks x rank x width].
LoraTable make_lora_table(std::span<const float> a, std::span<const float> b, std::size_t tasks,
                          std::size_t rank, std::size_t rows, std::size_t width, float scale);

// C[t] += (A[t]·downᵀ)·upᵀ for the rows t of every sequence of `batch` that has an adapter
// (consecutive sequences of one adapter in one product), A of row stride lda and C of ldc.
// `scratch` holds at least batch.tokens() · rank floats. Products this small are not worth waking
// the pool for: only a run of many rows shares them out.
void add_lora(const float* a, std::size_t lda, const TokenBatch& batch, const LoraLinear& lora, float* c,
              std::size_t ldc, float* scratch, ThreadPool* pool);

}  // namespace warden::model::engine

#pragma once
// An embedding table read by row (word, position and token-type embeddings), held in the
// model's precision: float32 (a view into the memory-mapped checkpoint when it holds aligned
// float32 — no copy, and only the rows used are ever paged in — else an owned copy),
// bfloat16, or int8 with one scale per row. The reduced forms are widened one row at a time,
// when a token needs it. Converted tables live in an arena (the model's, so that a packed
// image holds them too, or their own).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/arena.hpp"

#include "kernels/dense.hpp"

namespace warden::model::engine {

class EmbeddingTable {
 public:
  EmbeddingTable() = default;
  // values: rows*width floats that outlive the table (the mapping).
  static EmbeddingTable view(std::span<const float> values, std::size_t rows, std::size_t width);
  // The floats stored in `precision` (float32: a copy). `values` may be the mapping:
  // converting from it directly keeps a float copy of the table from ever existing.
  static EmbeddingTable make(Precision precision, std::span<const float> values, std::size_t rows,
                             std::size_t width, Arena* arena = nullptr);
  // The same from rows produced a block at a time: fill(row0, out) writes the float rows from
  // row0 on into out (out.size() / width of them). A table stored in another type than its
  // source's (a bfloat16 checkpoint's 151k-row vocabulary in int8) never exists whole in float.
  using RowFill = std::function<void(std::size_t row0, std::span<float> out)>;
  static EmbeddingTable make_by_rows(Precision precision, std::size_t rows, std::size_t width,
                                     const RowFill& fill, Arena* arena = nullptr);
  // Rows quantised already (an int8 checkpoint).
  static EmbeddingTable from_int8(const kernels::QuantizedRows& rows, std::size_t count, std::size_t width,
                                  Arena* arena = nullptr);
  // The table a prefilled arena holds next (saved from make/from_int8 with the same
  // precision and shape, taken in the same order).
  static EmbeddingTable prefilled(Precision precision, std::size_t rows, std::size_t width, Arena& arena);
  // Bytes an arena must provide for a converted table.
  [[nodiscard]] static std::size_t arena_bytes(Precision precision, std::size_t rows, std::size_t width);

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t width() const noexcept { return width_; }
  [[nodiscard]] Precision precision() const noexcept { return precision_; }
  [[nodiscard]] std::size_t bytes() const noexcept;

  // Row i as width() floats: a pointer into the table (float32), or `scratch` (width()
  // floats) filled with the widened row.
  [[nodiscard]] const float* row(std::size_t i, float* scratch) const noexcept;

 private:
  std::size_t rows_ = 0;
  std::size_t width_ = 0;
  Precision precision_ = Precision::Float32;
  // Takes the spans of a converted table from `arena` (or from own_ when null).
  static EmbeddingTable over(Precision precision, std::size_t rows, std::size_t width, Arena* arena);

  Arena own_;
  std::span<const float> values_;  // float32: f32_ or the mapping
  std::span<float> f32_;           // a float32 copy in the arena
  std::span<std::uint16_t> bf16_;  // bfloat16 bits
  std::span<std::int8_t> int8_values_;
  std::span<float> int8_scales_;
};

}  // namespace warden::model::engine

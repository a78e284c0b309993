#include "model/engine/embedding_table.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace warden::model::engine {

EmbeddingTable EmbeddingTable::view(std::span<const float> values, std::size_t rows, std::size_t width) {
  if (values.size() != rows * width) throw Error(ErrorKind::Internal, "EmbeddingTable: size mismatch");
  EmbeddingTable t;
  t.rows_ = rows;
  t.width_ = width;
  t.values_ = values;
  return t;
}

EmbeddingTable EmbeddingTable::over(Precision precision, std::size_t rows, std::size_t width, Arena* arena) {
  EmbeddingTable t;
  t.rows_ = rows;
  t.width_ = width;
  t.precision_ = precision;
  if (arena == nullptr) {
    t.own_ = Arena(arena_bytes(precision, rows, width));
    arena = &t.own_;
  }
  switch (precision) {
    case Precision::Float32:
      t.f32_ = arena->take<float>(rows * width);
      t.values_ = t.f32_;
      break;
    case Precision::BFloat16:
      t.bf16_ = arena->take<std::uint16_t>(rows * width);
      break;
    case Precision::Int8:
      t.int8_values_ = arena->take<std::int8_t>(rows * width);
      t.int8_scales_ = arena->take<float>(rows);
      break;
  }
  return t;
}

std::size_t EmbeddingTable::arena_bytes(Precision precision, std::size_t rows, std::size_t width) {
  switch (precision) {
    case Precision::Float32:
      return Arena::footprint<float>(rows * width);
    case Precision::BFloat16:
      return Arena::footprint<std::uint16_t>(rows * width);
    case Precision::Int8:
      return Arena::footprint<std::int8_t>(rows * width) + Arena::footprint<float>(rows);
  }
  return 0;
}

EmbeddingTable EmbeddingTable::make(Precision precision, std::span<const float> values, std::size_t rows,
                                    std::size_t width, Arena* arena) {
  if (values.size() != rows * width) throw Error(ErrorKind::Internal, "EmbeddingTable: size mismatch");
  return make_by_rows(
      precision, rows, width,
      [&](std::size_t row0, std::span<float> out) {
        std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(row0 * width), out.size(), out.begin());
      },
      arena);
}

EmbeddingTable EmbeddingTable::make_by_rows(Precision precision, std::size_t rows, std::size_t width,
                                            const RowFill& fill, Arena* arena) {
  EmbeddingTable t = over(precision, rows, width, arena);
  constexpr std::size_t kBlockRows = 1024;  // a few MB of floats at a time
  std::vector<float> block(std::min(rows, kBlockRows) * width);
  for (std::size_t row0 = 0; row0 < rows; row0 += kBlockRows) {
    const std::size_t count = std::min(kBlockRows, rows - row0);
    const std::span<float> floats(block.data(), count * width);
    fill(row0, floats);
    const std::size_t at = row0 * width;
    switch (precision) {
      case Precision::Float32:
        std::copy(floats.begin(), floats.end(), t.f32_.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case Precision::BFloat16:
        std::transform(floats.begin(), floats.end(), t.bf16_.begin() + static_cast<std::ptrdiff_t>(at),
                       kernels::detail::to_bf16);
        break;
      case Precision::Int8: {  // one scale per row: a block quantises as the whole would
        const kernels::QuantizedRows q = kernels::quantize_rows(floats, count, width);
        std::copy(q.values.begin(), q.values.end(), t.int8_values_.begin() + static_cast<std::ptrdiff_t>(at));
        std::copy(q.scales.begin(), q.scales.end(),
                  t.int8_scales_.begin() + static_cast<std::ptrdiff_t>(row0));
        break;
      }
    }
  }
  return t;
}

EmbeddingTable EmbeddingTable::from_int8(const kernels::QuantizedRows& rows, std::size_t count,
                                         std::size_t width, Arena* arena) {
  if (rows.values.size() != count * width || rows.scales.size() != count) {
    throw Error(ErrorKind::Internal, "EmbeddingTable: size mismatch");
  }
  EmbeddingTable t = over(Precision::Int8, count, width, arena);
  std::copy(rows.values.begin(), rows.values.end(), t.int8_values_.begin());
  std::copy(rows.scales.begin(), rows.scales.end(), t.int8_scales_.begin());
  return t;
}

EmbeddingTable EmbeddingTable::prefilled(Precision precision, std::size_t rows, std::size_t width,
                                         Arena& arena) {
  if (!arena.prefilled()) throw Error(ErrorKind::Internal, "EmbeddingTable::prefilled: the arena is empty");
  return over(precision, rows, width, &arena);
}

std::size_t EmbeddingTable::bytes() const noexcept {
  return values_.size_bytes() + bf16_.size_bytes() + int8_values_.size_bytes() + int8_scales_.size_bytes();
}

const float* EmbeddingTable::row(std::size_t i, float* scratch) const noexcept {
  switch (precision_) {
    case Precision::Float32:
      return values_.data() + i * width_;
    case Precision::BFloat16: {
      const std::uint16_t* src = bf16_.data() + i * width_;
      for (std::size_t j = 0; j < width_; ++j) {
        scratch[j] = std::bit_cast<float>(static_cast<std::uint32_t>(src[j]) << 16);
      }
      return scratch;
    }
    case Precision::Int8: {
      const std::int8_t* src = int8_values_.data() + i * width_;
      const float scale = int8_scales_[i];
      for (std::size_t j = 0; j < width_; ++j) scratch[j] = static_cast<float>(src[j]) * scale;
      return scratch;
    }
  }
  return scratch;
}

}  // namespace warden::model::engine

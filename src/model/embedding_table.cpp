#include "model/embedding_table.hpp"

#include <bit>
#include <cstring>

#include "core/error.hpp"

namespace warden::model {

namespace {

// Round to nearest even, as the bf16 GEMM rounds its weights; NaN stays a (quiet) NaN.
std::uint16_t to_bf16(float v) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(v);
  if ((bits & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>((bits >> 16) | 0x40U);
  return static_cast<std::uint16_t>((bits + 0x7FFFU + ((bits >> 16) & 1U)) >> 16);
}

}  // namespace

EmbeddingTable EmbeddingTable::view(std::span<const float> values, std::size_t rows, std::size_t width) {
  if (values.size() != rows * width) throw Error(ErrorKind::Internal, "EmbeddingTable: size mismatch");
  EmbeddingTable t;
  t.rows_ = rows;
  t.width_ = width;
  t.values_ = values;
  return t;
}

EmbeddingTable EmbeddingTable::make(Precision precision, std::span<const float> values, std::size_t rows,
                                    std::size_t width) {
  if (values.size() != rows * width) throw Error(ErrorKind::Internal, "EmbeddingTable: size mismatch");
  EmbeddingTable t;
  t.rows_ = rows;
  t.width_ = width;
  t.precision_ = precision;
  switch (precision) {
    case Precision::Float32:
      t.owned_.assign(values.begin(), values.end());
      t.values_ = t.owned_;
      break;
    case Precision::BFloat16:
      t.bf16_.reserve(values.size());
      for (const float v : values) t.bf16_.push_back(to_bf16(v));
      break;
    case Precision::Int8:
      t.int8_ = kernels::quantize_rows(values, rows, width);
      break;
  }
  return t;
}

EmbeddingTable EmbeddingTable::from_int8(kernels::QuantizedRows rows, std::size_t count, std::size_t width) {
  if (rows.values.size() != count * width || rows.scales.size() != count) {
    throw Error(ErrorKind::Internal, "EmbeddingTable: size mismatch");
  }
  EmbeddingTable t;
  t.rows_ = count;
  t.width_ = width;
  t.precision_ = Precision::Int8;
  t.int8_ = std::move(rows);
  return t;
}

std::size_t EmbeddingTable::bytes() const noexcept {
  return values_.size() * sizeof(float) + bf16_.size() * sizeof(std::uint16_t) + int8_.values.size() +
         int8_.scales.size() * sizeof(float);
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
      const std::int8_t* src = int8_.values.data() + i * width_;
      const float scale = int8_.scales[i];
      for (std::size_t j = 0; j < width_; ++j) scratch[j] = static_cast<float>(src[j]) * scale;
      return scratch;
    }
  }
  return scratch;
}

}  // namespace warden::model

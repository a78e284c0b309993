#include "http/embedding_types.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "http/base64.hpp"

namespace warden::http {

namespace {

struct Named {
  EmbeddingType type;
  std::string_view name;
};
constexpr std::array kTypes = {
    Named{EmbeddingType::Float, "float"},     Named{EmbeddingType::Int8, "int8"},
    Named{EmbeddingType::Uint8, "uint8"},     Named{EmbeddingType::Binary, "binary"},
    Named{EmbeddingType::Ubinary, "ubinary"}, Named{EmbeddingType::Base64, "base64"},
};

std::vector<std::int32_t> scaled_int8(std::span<const float> row, std::int32_t offset) {
  float largest = 0.0F;
  for (const float v : row) largest = std::max(largest, std::fabs(v));
  std::vector<std::int32_t> out(row.size(), offset);
  if (largest == 0.0F) return out;
  const float scale = 127.0F / largest;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const auto q = static_cast<std::int32_t>(std::lround(row[i] * scale));
    out[i] = std::clamp(q, -127, 127) + offset;
  }
  return out;
}

std::vector<std::int32_t> packed_bits(std::span<const float> row, std::int32_t offset) {
  std::vector<std::int32_t> out((row.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] > 0.0F) out[i / 8] |= 1 << (7 - static_cast<int>(i % 8));
  }
  for (std::int32_t& b : out) b += offset;
  return out;
}

}  // namespace

std::optional<EmbeddingType> parse_embedding_type(std::string_view name) noexcept {
  for (const Named& n : kTypes) {
    if (n.name == name) return n.type;
  }
  return std::nullopt;
}

std::string_view embedding_type_name(EmbeddingType type) noexcept {
  for (const Named& n : kTypes) {
    if (n.type == type) return n.name;
  }
  return "float";
}

std::vector<std::int32_t> quantize(std::span<const float> row, EmbeddingType type) {
  switch (type) {
    case EmbeddingType::Int8:
      return scaled_int8(row, 0);
    case EmbeddingType::Uint8:
      return scaled_int8(row, 128);
    case EmbeddingType::Ubinary:
      return packed_bits(row, 0);
    case EmbeddingType::Binary:
      return packed_bits(row, -128);
    case EmbeddingType::Float:
    case EmbeddingType::Base64:
      break;
  }
  return {};
}

void write_embedding(JsonWriter& w, std::span<const float> row, EmbeddingType type) {
  if (type == EmbeddingType::Base64) {
    w.value(base64_floats(row));
    return;
  }
  w.begin_array();
  if (type == EmbeddingType::Float) {
    for (const float v : row) w.value(v);
  } else {
    for (const std::int32_t q : quantize(row, type)) w.value(q);
  }
  w.end_array();
}

}  // namespace warden::http

#pragma once
// Cohere's embedding types: the compact forms vector stores keep, written from a unit-length
// float vector. Cohere does not publish its quantisation; Warden's is (docs/api.md):
//   float    the values themselves
//   int8     round(127 * v / max|v|): the vector scaled so that its largest component is
//            +-127 (cosine similarity is unchanged by the per-vector scale)
//   uint8    int8 + 128, in 1..255
//   ubinary  one bit per dimension, 1 where v > 0, packed eight to a byte with the first
//            dimension in the highest bit (numpy's packbits); ceil(dim / 8) values in 0..255
//   binary   ubinary - 128, in -128..127 (sentence-transformers' signed binary)
//   base64   the float32 values' little-endian bytes in base64 (OpenAI's encoding)

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/json_writer.hpp"

namespace warden::http {

enum class EmbeddingType { Float, Int8, Uint8, Binary, Ubinary, Base64 };

[[nodiscard]] std::optional<EmbeddingType> parse_embedding_type(std::string_view name) noexcept;
[[nodiscard]] std::string_view embedding_type_name(EmbeddingType type) noexcept;

// The integer forms, as defined above.
[[nodiscard]] std::vector<std::int32_t> quantize(std::span<const float> row, EmbeddingType type);

// The row in `type`'s JSON form: a list of numbers, or a base64 string.
void write_embedding(JsonWriter& w, std::span<const float> row, EmbeddingType type);

}  // namespace warden::http

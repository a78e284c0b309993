#pragma once
// What the embedding routes do to pooled rows before writing them: Matryoshka truncation
// and normalisation, the `dimensions` check, and a row as a JSON array. Internal to the
// router's files.

#include <cstddef>
#include <optional>
#include <span>

#include "core/json_writer.hpp"
#include "embed/embedder.hpp"

namespace warden::http {

// Matryoshka truncation then (optionally) normalisation, per row: the order
// sentence-transformers uses (truncate_dim, then normalize). Rows that are unit vectors
// already (unit = the embedder says so) are left bit-exact unless truncated.
Embeddings finish_rows(Embeddings rows, std::optional<std::size_t> dimensions, bool normalize, bool unit);

// 422 unless `dimensions` is absent or between 1 and the model's `dim`; `param` names the field.
void check_dimensions(std::optional<std::size_t> dimensions, std::size_t dim,
                      std::string_view param = "dimensions");

void write_row(JsonWriter& w, std::span<const float> row);

}  // namespace warden::http

#pragma once
// What the embedding routes write: the `dimensions` check in the HTTP error format and a row
// as a JSON array. (Truncation and normalisation are serving/results.hpp's.) Internal to the
// router's files.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "core/json_writer.hpp"

namespace warden::http {

// 422 unless `dimensions` is absent or between 1 and the model's `dim`; `param` names the field.
void check_dimensions(std::optional<std::size_t> dimensions, std::size_t dim,
                      std::string_view param = "dimensions");

void write_row(JsonWriter& w, std::span<const float> row);

}  // namespace warden::http

#pragma once
// What the embedding routes write: a row as a JSON array. (Checks, truncation and
// normalisation are serving/tasks'.) Internal to src/http/.

#include <cstddef>
#include <span>
#include <string_view>

#include "core/json_writer.hpp"

namespace warden::http {

void write_row(JsonWriter& w, std::span<const float> row);

}  // namespace warden::http

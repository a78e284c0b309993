#include "http/embed_rows.hpp"

#include <string>

#include "core/error.hpp"
#include "http/api_error.hpp"
#include "serving/results.hpp"

namespace warden::http {

void check_dimensions(std::optional<std::size_t> dimensions, std::size_t dim, std::string_view param) {
  try {
    serving::check_dimensions(dimensions, dim, param);
  } catch (const Error& e) {
    throw ApiError(422, "Validation", e.what(), std::string(param));
  }
}

void write_row(JsonWriter& w, std::span<const float> row) {
  w.begin_array();
  for (const float x : row) w.value(x);
  w.end_array();
}

}  // namespace warden::http

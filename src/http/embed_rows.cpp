#include "http/embed_rows.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "http/api_error.hpp"

namespace warden::http {

namespace {

void l2_normalize(std::span<float> v) {
  double sum = 0.0;
  for (const float x : v) sum += static_cast<double>(x) * static_cast<double>(x);
  if (sum == 0.0) return;
  const auto inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= inv;
}

}  // namespace

Embeddings finish_rows(Embeddings rows, std::optional<std::size_t> dimensions, bool normalize, bool unit) {
  if (unit && !(dimensions && *dimensions < rows.dim())) return rows;
  if (dimensions && *dimensions < rows.dim()) {
    Embeddings cut(rows.rows(), *dimensions);
    for (std::size_t i = 0; i < rows.rows(); ++i) {
      std::copy_n(rows.row(i).data(), *dimensions, cut.row(i).data());
    }
    rows = std::move(cut);
  }
  if (normalize) {
    for (std::size_t i = 0; i < rows.rows(); ++i) l2_normalize(rows.row(i));
  }
  return rows;
}

void check_dimensions(std::optional<std::size_t> dimensions, std::size_t dim, std::string_view param) {
  if (dimensions && (*dimensions == 0 || *dimensions > dim)) {
    throw ApiError(422, "Validation",
                   fmt::format("`{}` must be between 1 and the model's {}, got {}", param, dim, *dimensions),
                   std::string(param));
  }
}

void write_row(JsonWriter& w, std::span<const float> row) {
  w.begin_array();
  for (const float x : row) w.value(x);
  w.end_array();
}

}  // namespace warden::http

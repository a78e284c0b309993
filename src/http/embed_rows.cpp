#include "http/embed_rows.hpp"

namespace warden::http {

void write_row(JsonWriter& w, std::span<const float> row) {
  w.begin_array();
  for (const float x : row) w.value(x);
  w.end_array();
}

}  // namespace warden::http

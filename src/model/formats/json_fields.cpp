#include "model/formats/json_fields.hpp"

#include <fmt/format.h>

namespace warden::model::formats::json_fields {

simdjson::dom::object parse_object(simdjson::dom::parser& parser, std::string_view text,
                                   std::string_view source) {
  simdjson::dom::element root;
  if (const auto err = parser.parse(text.data(), text.size()).get(root); err != simdjson::SUCCESS) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: not valid JSON ({})", source, simdjson::error_message(err)));
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: the top level is not a JSON object", source));
  }
  return object;
}

Error Fields::fail(std::string_view key, std::string_view what) const {
  return Error(ErrorKind::CorruptFile, fmt::format("{}: \"{}\" {}", source_, key, what));
}

std::optional<simdjson::dom::element> Fields::get(std::string_view key) const {
  simdjson::dom::element value;
  if (object_.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  return value;
}

bool Fields::has(std::string_view key) const {
  return get(key).has_value();
}

bool Fields::is_null(std::string_view key) const {
  simdjson::dom::element value;
  return object_.at_key(key).get(value) == simdjson::SUCCESS && value.is_null();
}

std::optional<std::int64_t> Fields::integer(std::string_view key) const {
  const auto value = get(key);
  if (!value) return std::nullopt;
  std::int64_t v = 0;
  if (value->get_int64().get(v) != simdjson::SUCCESS) throw fail(key, "must be an integer");
  return v;
}

std::optional<double> Fields::number(std::string_view key) const {
  const auto value = get(key);
  if (!value) return std::nullopt;
  if (!value->is_number()) throw fail(key, "must be a number");
  double v = 0;
  if (value->get_double().get(v) == simdjson::SUCCESS) return v;
  std::int64_t i = 0;
  if (value->get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  std::uint64_t u = 0;
  if (value->get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  throw fail(key, "must be a number");
}

std::optional<bool> Fields::boolean(std::string_view key) const {
  const auto value = get(key);
  if (!value) return std::nullopt;
  bool v = false;
  if (value->get_bool().get(v) != simdjson::SUCCESS) throw fail(key, "must be true or false");
  return v;
}

std::optional<std::string> Fields::string(std::string_view key) const {
  const auto value = get(key);
  if (!value) return std::nullopt;
  std::string_view v;
  if (value->get_string().get(v) != simdjson::SUCCESS) throw fail(key, "must be a string");
  return std::string(v);
}

std::optional<simdjson::dom::object> Fields::object(std::string_view key) const {
  const auto value = get(key);
  if (!value) return std::nullopt;
  simdjson::dom::object v;
  if (value->get_object().get(v) != simdjson::SUCCESS) throw fail(key, "must be a JSON object");
  return v;
}

std::optional<simdjson::dom::array> Fields::array(std::string_view key) const {
  const auto value = get(key);
  if (!value) return std::nullopt;
  simdjson::dom::array v;
  if (value->get_array().get(v) != simdjson::SUCCESS) throw fail(key, "must be a JSON array");
  return v;
}

std::int64_t Fields::integer_in(std::string_view key, std::int64_t min, std::int64_t max) const {
  const auto v = integer(key);
  if (!v) throw fail(key, "is missing");
  if (*v < min || *v > max)
    throw fail(key, fmt::format("is {}, outside the sane range [{}, {}]", *v, min, max));
  return *v;
}

}  // namespace warden::model::formats::json_fields

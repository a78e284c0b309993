#include "tokenizer/json.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::tokenizer::detail::json {

namespace {
[[noreturn]] void fail(std::string_view what, std::string_view problem) {
  throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: {} {}", what, problem));
}
}  // namespace

bool Value::is_null() const {
  return e_.is_null();
}
bool Value::is_object() const {
  return e_.is_object();
}
bool Value::is_array() const {
  return e_.is_array();
}
bool Value::is_string() const {
  return e_.is_string();
}

std::optional<Value> Value::find(std::string_view key) const {
  if (!e_.is_object()) return std::nullopt;
  simdjson::dom::element child;
  if (e_.get_object().at_key(key).get(child) != simdjson::SUCCESS) return std::nullopt;
  if (child.is_null()) return std::nullopt;
  return Value(child);
}

bool Value::has(std::string_view key) const {
  return find(key).has_value();
}

Value Value::at(std::string_view key) const {
  auto v = find(key);
  if (!v) fail(fmt::format("'{}'", key), "is missing");
  return *v;
}

std::string Value::get_string(std::string_view key) const {
  return std::string(at(key).as_string(key));
}

std::int64_t Value::get_int(std::string_view key) const {
  return at(key).as_int(key);
}

double Value::get_double(std::string_view key) const {
  return at(key).as_double(key);
}

bool Value::get_bool(std::string_view key, bool fallback) const {
  auto v = find(key);
  return v ? v->as_bool(key) : fallback;
}

std::optional<bool> Value::get_optional_bool(std::string_view key) const {
  auto v = find(key);
  if (!v) return std::nullopt;
  return v->as_bool(key);
}

std::string Value::get_string_or(std::string_view key, std::string_view fallback) const {
  auto v = find(key);
  return std::string(v ? v->as_string(key) : fallback);
}

std::optional<std::int64_t> Value::get_optional_int(std::string_view key) const {
  auto v = find(key);
  if (!v) return std::nullopt;
  return v->as_int(key);
}

std::string Value::type_name(std::string_view what) const {
  if (!e_.is_object()) fail(what, "is not an object");
  auto v = find("type");
  if (!v) fail(what, "has no \"type\"");
  return std::string(v->as_string(what));
}

std::string_view Value::as_string(std::string_view what) const {
  std::string_view s;
  if (e_.get_string().get(s) != simdjson::SUCCESS) fail(fmt::format("'{}'", what), "is not a string");
  return s;
}

std::int64_t Value::as_int(std::string_view what) const {
  std::int64_t i = 0;
  if (e_.get_int64().get(i) == simdjson::SUCCESS) return i;
  std::uint64_t u = 0;
  if (e_.get_uint64().get(u) == simdjson::SUCCESS && u <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(u);
  }
  fail(fmt::format("'{}'", what), "is not an integer");
}

double Value::as_double(std::string_view what) const {
  double d = 0;
  if (e_.get_double().get(d) == simdjson::SUCCESS) return d;
  std::int64_t i = 0;
  if (e_.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  fail(fmt::format("'{}'", what), "is not a number");
}

bool Value::as_bool(std::string_view what) const {
  bool b = false;
  if (e_.get_bool().get(b) != simdjson::SUCCESS) fail(fmt::format("'{}'", what), "is not a boolean");
  return b;
}

std::vector<Value> Value::items() const {
  simdjson::dom::array arr;
  if (e_.get_array().get(arr) != simdjson::SUCCESS) fail("a value", "is not an array");
  std::vector<Value> out;
  out.reserve(arr.size());
  for (simdjson::dom::element child : arr) out.emplace_back(child);
  return out;
}

std::vector<std::pair<std::string_view, Value>> Value::members() const {
  simdjson::dom::object obj;
  if (e_.get_object().get(obj) != simdjson::SUCCESS) fail("a value", "is not an object");
  std::vector<std::pair<std::string_view, Value>> out;
  out.reserve(obj.size());
  for (auto field : obj) out.emplace_back(field.key, Value(field.value));
  return out;
}

Value parse(simdjson::dom::parser& parser, std::string_view json, std::string_view what) {
  simdjson::dom::element root;
  const auto err = parser.parse(json.data(), json.size()).get(root);
  if (err != simdjson::SUCCESS) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: invalid JSON ({})", what, simdjson::error_message(err)));
  }
  return Value(root);
}

}  // namespace warden::tokenizer::detail::json

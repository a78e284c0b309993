#pragma once
// A thin, throwing view over simdjson's DOM for reading tokenizer.json: every accessor
// names the key it wanted, so a malformed file gives an error that says where.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::tokenizer::detail::json {

class Value {
 public:
  Value() = default;
  explicit Value(simdjson::dom::element e) : e_(e) {}

  [[nodiscard]] bool is_null() const;
  [[nodiscard]] bool is_object() const;
  [[nodiscard]] bool is_array() const;
  [[nodiscard]] bool is_string() const;
  [[nodiscard]] bool has(std::string_view key) const;  // present and not null

  // Required members (throw Error(CorruptFile) naming `key`).
  [[nodiscard]] Value at(std::string_view key) const;
  [[nodiscard]] std::string get_string(std::string_view key) const;
  [[nodiscard]] std::int64_t get_int(std::string_view key) const;
  [[nodiscard]] double get_double(std::string_view key) const;
  // Optional members (absent or null -> default / nullopt).
  [[nodiscard]] std::optional<Value> find(std::string_view key) const;
  [[nodiscard]] bool get_bool(std::string_view key, bool fallback) const;
  [[nodiscard]] std::optional<bool> get_optional_bool(std::string_view key) const;
  [[nodiscard]] std::string get_string_or(std::string_view key, std::string_view fallback) const;
  [[nodiscard]] std::optional<std::int64_t> get_optional_int(std::string_view key) const;
  // The "type" member; `what` names the component family for the error message.
  [[nodiscard]] std::string type_name(std::string_view what) const;

  // Conversions of this value.
  [[nodiscard]] std::string_view as_string(std::string_view what) const;
  [[nodiscard]] std::int64_t as_int(std::string_view what) const;
  [[nodiscard]] double as_double(std::string_view what) const;
  [[nodiscard]] bool as_bool(std::string_view what) const;
  [[nodiscard]] std::vector<Value> items() const;                                 // array elements
  [[nodiscard]] std::vector<std::pair<std::string_view, Value>> members() const;  // object members

 private:
  simdjson::dom::element e_;
};

// Parses a whole document; the parser must outlive the returned Value.
Value parse(simdjson::dom::parser& parser, std::string_view json, std::string_view what);

}  // namespace warden::tokenizer::detail::json

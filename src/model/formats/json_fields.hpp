#pragma once
// Typed field access for the small JSON files of a model folder (config.json and the
// sentence-transformers files), with one error style: Error(CorruptFile) naming the file and
// the key, and what was expected. Unknown keys are simply never asked for.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "core/error.hpp"

namespace warden::model::formats::json_fields {

// Parses `text` and returns its root object; Error(CorruptFile) naming `source` otherwise.
// The parser owns the document and must outlive the returned object.
simdjson::dom::object parse_object(simdjson::dom::parser& parser, std::string_view text,
                                   std::string_view source);

class Fields {
 public:
  Fields(simdjson::dom::object object, std::string_view source) : object_(object), source_(source) {}

  [[nodiscard]] Error fail(std::string_view key, std::string_view what) const;
  [[nodiscard]] bool has(std::string_view key) const;      // present and not null
  [[nodiscard]] bool is_null(std::string_view key) const;  // present as JSON null
  // Absent or JSON null -> nullopt; present with the wrong type -> Error.
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key) const;
  [[nodiscard]] std::optional<double> number(std::string_view key) const;  // integers accepted
  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> string(std::string_view key) const;
  [[nodiscard]] std::optional<simdjson::dom::object> object(std::string_view key) const;
  [[nodiscard]] std::optional<simdjson::dom::array> array(std::string_view key) const;

  // A required integer in [min, max].
  [[nodiscard]] std::int64_t integer_in(std::string_view key, std::int64_t min, std::int64_t max) const;

  [[nodiscard]] std::string_view source() const noexcept { return source_; }

 private:
  [[nodiscard]] std::optional<simdjson::dom::element> get(std::string_view key) const;
  simdjson::dom::object object_;
  std::string_view source_;
};

}  // namespace warden::model::formats::json_fields

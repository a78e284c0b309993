#include "http/body_fields.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "serving/model_name.hpp"

namespace warden::http {

namespace body {

ApiError validation(const std::string& message, std::string param) {
  return ApiError(422, "Validation", message, std::move(param));
}
// "`inputs`", "`inputs[2]`", "`inputs[2][0]`": how a message names a field or a list item.
// (Appended piece by piece: GCC 12 gives a false -Wrestrict on "`" + std::string(...).)
std::string ticked(std::string_view name) {
  std::string s;
  s.reserve(name.size() + 2);
  s.append("`").append(name).append("`");
  return s;
}
std::string item(std::string_view name, std::size_t i) {
  std::string s(name);
  s.append("[").append(std::to_string(i)).append("]");
  return s;
}
// Parses body into an object, mapping every simdjson failure to a 422 a client can act on.
object parse_object(simdjson::dom::parser& parser, std::string_view body) {
  // allocate() with the body's own size: parse() then never reallocates, so the depth bound
  // set here is the one that applies.
  if (parser.allocate(std::max<std::size_t>(body.size(), 64), kMaxJsonDepth) != simdjson::SUCCESS) {
    throw ApiError(500, "Backend", "could not allocate the JSON parser");
  }
  element doc;
  const simdjson::error_code err = parser.parse(body.data(), body.size()).get(doc);
  if (err == simdjson::UTF8_ERROR) throw validation("request body is not valid UTF-8", "");
  if (err == simdjson::DEPTH_ERROR) {
    throw validation("request body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels", "");
  }
  if (err != simdjson::SUCCESS) {
    throw validation(std::string("request body is not valid JSON: ") + simdjson::error_message(err), "");
  }
  object obj;
  if (doc.get(obj) != simdjson::SUCCESS) throw validation("request body must be a JSON object", "");
  return obj;
}
// The field, or nothing when it is absent or null (clients send null for "not set").
std::optional<element> optional_field(object obj, std::string_view name) {
  element field;
  if (obj.at_key(name).get(field) != simdjson::SUCCESS || field.is_null()) return std::nullopt;
  return field;
}
element required_field(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) throw validation("missing field " + ticked(name), std::string(name));
  return *field;
}
std::optional<bool> optional_bool(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) return std::nullopt;
  bool b = false;
  if (field->get(b) != simdjson::SUCCESS)
    throw validation(ticked(name) + " must be a boolean", std::string(name));
  return b;
}
bool bool_or(object obj, std::string_view name, bool fallback) {
  return optional_bool(obj, name).value_or(fallback);
}
// A string; `label` names it in the message (a list item), `param` is the top-level field.
std::string string_value(element e, std::string_view label, std::string_view param) {
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS)
    throw validation(ticked(label) + " must be a string", std::string(param));
  return std::string(s);
}
std::optional<std::string> optional_string(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) return std::nullopt;
  return string_value(*field, name, name);
}
std::string required_string(object obj, std::string_view name) {
  return string_value(required_field(obj, name), name, name);
}
// Every body's `model` (empty when absent: the route's default model answers).
std::string model_field(object obj) {
  std::string name = optional_string(obj, "model").value_or("");
  if (const std::string problem = serving::lookup_name_problem(name); !problem.empty()) {
    throw validation(fmt::format("`model`: {}", problem), "model");
  }
  return name;
}
// A count such as `dimensions` or `top_n`: an integer >= 1 (not 2.0, not true).
std::optional<std::size_t> optional_positive(object obj, std::string_view name) {
  const std::optional<element> field = optional_field(obj, name);
  if (!field) return std::nullopt;
  std::uint64_t n = 0;
  if (field->get(n) != simdjson::SUCCESS || n == 0 || n > std::numeric_limits<std::size_t>::max()) {
    throw validation(ticked(name) + " must be an integer >= 1", std::string(name));
  }
  return static_cast<std::size_t>(n);
}
// TEI's enum is "Left" / "Right"; clients also send "left" / "right", so any case is accepted.
TruncationDirection truncation_direction(object obj, TruncationDirection fallback) {
  constexpr std::string_view kName = "truncation_direction";
  const std::optional<std::string> s = optional_string(obj, kName);
  if (!s) return fallback;
  std::string lower = *s;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  if (lower == "right") return TruncationDirection::Right;
  if (lower == "left") return TruncationDirection::Left;
  throw validation("`truncation_direction` must be \"Right\" or \"Left\"", std::string(kName));
}
// The first (second) element of a list the caller has checked is long enough. (Iterators, not
// at(): at()'s error path makes GCC 12 warn of a null dereference in simdjson.)
element first(array list) {
  return *list.begin();
}
element second(array list) {
  auto it = list.begin();
  ++it;
  return *it;
}
bool is_number(element e) {
  return e.is_int64() || e.is_uint64() || e.is_double();
}
std::uint32_t token_id(element e, std::string_view label, std::string_view param) {
  std::uint64_t id = 0;
  if (e.get(id) != simdjson::SUCCESS || id > std::numeric_limits<std::uint32_t>::max()) {
    throw validation(ticked(label) + " must be a token id (an integer from 0 to 4294967295)",
                     std::string(param));
  }
  return static_cast<std::uint32_t>(id);
}
// A non-empty list of token ids.
std::vector<std::uint32_t> id_list(array list, std::string_view label, std::string_view param) {
  std::vector<std::uint32_t> ids;
  ids.reserve(list.size());
  std::size_t i = 0;
  for (const element e : list) ids.push_back(token_id(e, item(label, i++), param));
  if (ids.empty())
    throw validation(ticked(label) + " cannot be an empty list of token ids", std::string(param));
  return ids;
}
ApiError empty(std::string_view name) {
  return ApiError(400, "Empty", ticked(name) + " cannot be empty", std::string(name));
}
// The embedding routes' `inputs` / `input`, with TEI's untagged rule: a list whose first
// element is a number is ONE sequence of token ids; any other list is a batch whose items
// are texts or lists of token ids (mixed allowed).
std::vector<Input> embedding_inputs(object obj, std::string_view name) {
  const element field = required_field(obj, name);
  std::vector<Input> inputs;
  std::string_view s;
  if (field.get(s) == simdjson::SUCCESS) {
    inputs.push_back(Input{std::string(s), {}, false});
    return inputs;
  }
  array list;
  if (field.get(list) != simdjson::SUCCESS) {
    throw validation(
        ticked(name) + " must be a string, a list of token ids, or a list of strings and lists of token ids",
        std::string(name));
  }
  if (list.size() == 0) throw empty(name);
  if (is_number(first(list))) {
    inputs.push_back(Input{{}, id_list(list, name, name), true});
    return inputs;
  }
  inputs.reserve(list.size());
  std::size_t i = 0;
  for (const element e : list) {
    const std::string label = item(name, i++);
    array ids;
    if (e.get(s) == simdjson::SUCCESS) {
      inputs.push_back(Input{std::string(s), {}, false});
    } else if (e.get(ids) == simdjson::SUCCESS) {
      inputs.push_back(Input{{}, id_list(ids, label, name), true});
    } else {
      throw validation(ticked(label) + " must be a string or a list of token ids", std::string(name));
    }
  }
  return inputs;
}
// A list of strings, possibly empty (a single string is not accepted: TEI's Vec<String>).
std::vector<std::string> string_items(element field, std::string_view name) {
  array list;
  if (field.get(list) != simdjson::SUCCESS)
    throw validation(ticked(name) + " must be a list of strings", std::string(name));
  std::vector<std::string> out;
  out.reserve(list.size());
  std::size_t i = 0;
  for (const element e : list) out.push_back(string_value(e, item(name, i++), name));
  return out;
}
// A non-empty list of strings.
std::vector<std::string> string_list(element field, std::string_view name) {
  std::vector<std::string> out = string_items(field, name);
  if (out.empty()) throw empty(name);
  return out;
}
std::string non_empty_query(object obj) {
  std::string query = required_string(obj, "query");
  if (query.empty()) throw validation("`query` cannot be empty", "query");
  return query;
}
// A field that is one string (single = true) or a list of strings.
std::vector<std::string> string_or_list(object obj, std::string_view name, bool& single) {
  const element field = required_field(obj, name);
  std::string_view s;
  if (field.get(s) == simdjson::SUCCESS) {
    single = true;
    return {std::string(s)};
  }
  if (!field.is_array())
    throw validation(ticked(name) + " must be a string or a list of strings", std::string(name));
  return string_list(field, name);
}

}  // namespace body

serving::tasks::Tokenization tokenization(std::optional<bool> truncate, TruncationDirection direction,
                                          std::optional<std::string> prompt_name) {
  return {truncate,
          direction == TruncationDirection::Left ? embed::TruncationSide::Left : embed::TruncationSide::Right,
          std::move(prompt_name)};
}

}  // namespace warden::http

#pragma once
// What every POST route's body follows, and the field readers each route's parser (in its
// route file) uses: bodies are parsed with simdjson's DOM at a bounded depth.
//
// Shared rules (every parser):
// * invalid JSON, invalid UTF-8, nesting deeper than kMaxJsonDepth, a body that is not an
//   object, a missing required field and a field of the wrong type throw
//   ApiError(422, "Validation"); the message names the field (and the index of a list item,
//   e.g. "`inputs[2][0]`") and ApiError::param() is the top-level field name;
// * an empty input list throws ApiError(400, "Empty");
// * unknown fields are ignored and a JSON null counts as an absent field (TEI and OpenAI
//   clients send both);
// * every body may name the model that answers it in `model` (empty when absent: the
//   route's default model); a path prefix /models/{name}/ wins over it;
// * token ids are JSON integers from 0 to 2^32-1 (not 1.0, not true); an empty id list is 422.
// Limits that depend on the server (batch size, --auto-truncate, `dimensions` against the
// model's dimension) are the tasks' to check (serving/tasks).

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/api_error.hpp"
#include "serving/tasks/inputs.hpp"

namespace warden::http {

// Deeper documents are refused: no legitimate body nests further, and a bound keeps a
// hostile one from costing memory.
inline constexpr std::size_t kMaxJsonDepth = 32;

// One input: a text, or token ids the client tokenized itself (TEI and OpenAI accept both).
using Input = serving::tasks::Input;

enum class TruncationDirection { Right, Left };  // TEI's "Right" / "Left" (accepted in any case)

// A request's truncation (and prompt by name) as a task states them (serving/tasks/inputs.hpp).
serving::tasks::Tokenization tokenization(std::optional<bool> truncate, TruncationDirection direction,
                                          std::optional<std::string> prompt_name = std::nullopt);

// The field readers. Each throws ApiError(422, "Validation") naming the field (400 "Empty"
// where the rules say so).
namespace body {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

ApiError validation(const std::string& message, std::string param);

// "`inputs`", "`inputs[2]`", "`inputs[2][0]`": how a message names a field or a list item.
// (Appended piece by piece: GCC 12 gives a false -Wrestrict on "`" + std::string(...).)
std::string ticked(std::string_view name);

std::string item(std::string_view name, std::size_t i);

// Parses body into an object, mapping every simdjson failure to a 422 a client can act on.
object parse_object(simdjson::dom::parser& parser, std::string_view body);

// The field, or nothing when it is absent or null (clients send null for "not set").
std::optional<element> optional_field(object obj, std::string_view name);

element required_field(object obj, std::string_view name);

std::optional<bool> optional_bool(object obj, std::string_view name);

bool bool_or(object obj, std::string_view name, bool fallback);

// A string; `label` names it in the message (a list item), `param` is the top-level field.
std::string string_value(element e, std::string_view label, std::string_view param);

std::optional<std::string> optional_string(object obj, std::string_view name);

std::string required_string(object obj, std::string_view name);

// Every body's `model` (empty when absent: the route's default model answers).
std::string model_field(object obj);

// A count such as `dimensions` or `top_n`: an integer >= 1 (not 2.0, not true).
std::optional<std::size_t> optional_positive(object obj, std::string_view name);

// TEI's enum is "Left" / "Right"; clients also send "left" / "right", so any case is accepted.
TruncationDirection truncation_direction(object obj, TruncationDirection fallback);

// The first (second) element of a list the caller has checked is long enough. (Iterators, not
// at(): at()'s error path makes GCC 12 warn of a null dereference in simdjson.)
element first(array list);

element second(array list);

bool is_number(element e);

std::uint32_t token_id(element e, std::string_view label, std::string_view param);

// A non-empty list of token ids.
std::vector<std::uint32_t> id_list(array list, std::string_view label, std::string_view param);

ApiError empty(std::string_view name);

// The embedding routes' `inputs` / `input`, with TEI's untagged rule: a list whose first
// element is a number is ONE sequence of token ids; any other list is a batch whose items
// are texts or lists of token ids (mixed allowed).
std::vector<Input> embedding_inputs(object obj, std::string_view name);

// A list of strings, possibly empty (a single string is not accepted: TEI's Vec<String>).
std::vector<std::string> string_items(element field, std::string_view name);

// A non-empty list of strings.
std::vector<std::string> string_list(element field, std::string_view name);

std::string non_empty_query(object obj);

// A field that is one string (single = true) or a list of strings.
std::vector<std::string> string_or_list(object obj, std::string_view name, bool& single);

}  // namespace body

}  // namespace warden::http

#pragma once
// Model names. A name the operator gives (a --model alias, POST /admin/models' name) comes
// from a small safe alphabet, so that it is a plain path segment, a Prometheus label and a
// log field as it is. A name a request looks up (the body's `model`, a /models/{name}/
// prefix) may be a HuggingFace id with a '/', but never holds a control character: such a
// name is refused before any message could repeat it (a NUL would cut the message short).

#include <string>
#include <string_view>

namespace warden::serving {

inline constexpr std::size_t kMaxAliasBytes = 128;
inline constexpr std::size_t kMaxLookupNameBytes = 512;

// What is_valid_alias accepts, for error messages and the docs.
inline constexpr std::string_view kAliasRule =
    "1 to 128 characters from A-Z a-z 0-9 . _ - :, starting with a letter or a digit, without \"..\"";

[[nodiscard]] bool is_valid_alias(std::string_view name) noexcept;

// Empty when `name` may be looked up; else why not (without repeating the name).
[[nodiscard]] std::string lookup_name_problem(std::string_view name);

}  // namespace warden::serving

#include "serving/model_name.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace warden::serving {

namespace {

bool alnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool alias_char(char c) noexcept {
  return alnum(c) || c == '.' || c == '_' || c == '-' || c == ':';
}

}  // namespace

bool is_valid_alias(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxAliasBytes || !alnum(name.front())) return false;
  if (name.find("..") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(), alias_char);
}

std::string lookup_name_problem(std::string_view name) {
  if (name.size() > kMaxLookupNameBytes)
    return fmt::format("a model name is at most {} bytes", kMaxLookupNameBytes);
  if (utf8::find_invalid(name)) return "a model name must be valid UTF-8";
  const bool control = std::any_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20U || u == 0x7FU;
  });
  if (control) return "a model name may not contain control characters (NUL, newlines, ...)";
  return {};
}

}  // namespace warden::serving

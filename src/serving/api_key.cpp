#include "serving/api_key.hpp"

#include <algorithm>
#include <cstddef>

namespace warden::serving {

namespace {

bool constant_time_equals(std::string_view a, std::string_view b) noexcept {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

bool scheme_is_bearer(std::string_view s) noexcept {
  constexpr std::string_view kScheme = "bearer ";
  if (s.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = s[i];
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (lower != kScheme[i]) return false;
  }
  return true;
}

}  // namespace

bool bearer_authorized(std::string_view authorization, std::string_view key) noexcept {
  if (!scheme_is_bearer(authorization)) return false;
  std::string_view token = authorization.substr(7);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return constant_time_equals(token, key);
}

}  // namespace warden::serving

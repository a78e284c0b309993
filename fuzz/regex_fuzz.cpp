// Fuzzes the regex engine: the input up to the first '\n' is a pattern, the rest a text.
// Patterns we refuse must throw warden::Error; accepted ones must return sorted,
// non-overlapping, in-range, non-empty matches.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/regex.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = all.find('\n');
  if (nl == std::string_view::npos || nl > 64) return 0;
  const std::string_view pattern = all.substr(0, nl);
  const std::string_view text = all.substr(nl + 1);
  if (warden::utf8::find_invalid(pattern) || warden::utf8::find_invalid(text)) return 0;
  try {
    const auto re = warden::tokenizer::detail::make_regex_pattern(pattern);
    std::vector<std::uint32_t> m;
    re->find_all(text, m);
    std::uint32_t last = 0;
    for (std::size_t i = 0; i + 1 < m.size(); i += 2) {
      if (m[i] < last || m[i + 1] <= m[i] || m[i + 1] > text.size()) __builtin_trap();
      last = m[i + 1];
    }
  } catch (const warden::Error&) {
  }
  return 0;
}

#pragma once
// What the guard judges instead of the text as sent: the text with its disguises taken off
// (docs/guard.md). The passes, in order: invisible characters removed and tag characters
// revealed; compatibility folding (NFKC); encoded spans decoded — base64, hex, URL escapes,
// HTML references — and the result read again, for nested encodings (at most four rounds);
// look-alike letters and leetspeak folded; ROT13 undone. Each pass notes what it found as
// evidence. Linear in the text's length: every round of decoding shrinks what it decodes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace warden::guard::canonical {

struct Canonical {
  std::string text;                   // UTF-8
  std::vector<std::uint32_t> source;  // per byte of text: the byte of the original it comes from
  std::vector<std::string> evidence;  // what was hidden or disguised, and where (code points of the original)
};

// `text` must be valid UTF-8.
[[nodiscard]] Canonical canonicalize(std::string_view text);

}  // namespace warden::guard::canonical

// Fuzzes the guard's canonicalisation (src/guard/canonical/): any valid UTF-8 text. Checks
// what every answer must hold: valid UTF-8 out, one source offset per byte, each inside the
// original, and bounded growth (decoding never makes a text longer than NFKC's expansion).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/utf8.hpp"
#include "guard/canonical/canonicalize.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (warden::utf8::find_invalid(text)) return 0;
  const auto out = warden::guard::canonical::canonicalize(text);
  if (warden::utf8::find_invalid(out.text) || out.source.size() != out.text.size()) std::abort();
  for (const std::uint32_t s : out.source) {
    if (s >= size) std::abort();
  }
  // NFKC expands one code point to at most 18 (U+FDFA), 4 bytes each at most.
  if (out.text.size() > 72 * size + 64) std::abort();
  return 0;
}

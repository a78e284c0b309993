#include "guard/canonical/canonicalize.hpp"

#include "core/utf8.hpp"
#include "guard/canonical/base64.hpp"
#include "guard/canonical/compatibility.hpp"
#include "guard/canonical/confusables.hpp"
#include "guard/canonical/hex.hpp"
#include "guard/canonical/html_entities.hpp"
#include "guard/canonical/invisible.hpp"
#include "guard/canonical/leetspeak.hpp"
#include "guard/canonical/percent.hpp"
#include "guard/canonical/rot13.hpp"
#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

// Rounds of decoding: base64 of hex of URL escapes is as deep as disguises go in practice,
// and every round must shrink what it decodes, so the bound only stops a pathological
// input early.
constexpr int kMaxRounds = 4;

Canonical canonicalize(std::string_view text) {
  Findings found(text);
  Chars chars = to_chars(text);
  for (int round = 0; round < kMaxRounds; ++round) {
    reveal_invisible(chars, found);
    fold_compatibility(chars, found);
    bool decoded = decode_html_entities(chars, found);
    decoded = decode_percent_spans(chars, found) || decoded;
    decoded = decode_base64_spans(chars, found) || decoded;
    decoded = decode_hex_spans(chars, found) || decoded;
    if (!decoded) break;
  }
  fold_confusables(chars, found);
  fold_leetspeak(chars, found);
  decode_rot13(chars, found);
  Canonical out;
  out.text.reserve(chars.size());
  out.source.reserve(chars.size());
  for (const Char& c : chars) {
    const std::size_t before = out.text.size();
    utf8::append(out.text, c.cp);
    out.source.insert(out.source.end(), out.text.size() - before, c.source);
  }
  out.evidence = found.evidence();
  return out;
}

}  // namespace warden::guard::canonical

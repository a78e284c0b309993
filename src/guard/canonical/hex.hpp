#pragma once
// Hex-encoded spans that decode to text — contiguous ("69676e6f7265…", 16 digits or more),
// escaped ("\x69\x67\x6e…") or spaced ("69 67 6e 6f …", six bytes or more) — are replaced by
// that text. Hashes, keys and colours decode to bytes that are no text and stay.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

// True when a span was decoded.
bool decode_hex_spans(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

#pragma once
// Base64 spans (standard or URL-safe alphabet, 16 characters or more) that decode to text
// are replaced by that text: an instruction sent encoded ("decode this and do it: aWdub3Jl…")
// is judged by what it says. A span that decodes to bytes (a key, an image, a hash) stays.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

// True when a span was decoded.
bool decode_base64_spans(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

#pragma once
// URL-encoded spans (a word holding three or more %XX escapes, "%69%67%6E%6F%72%65") are
// replaced by what they encode when that is text.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

// True when a span was decoded.
bool decode_percent_spans(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

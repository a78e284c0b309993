#pragma once
// Characters that show nothing: zero-width spaces and joiners, word joiners, soft hyphens,
// the byte-order mark inside a text, variation selectors and bidirectional controls are
// removed (they split a trigger word for a matcher, or reorder what a reader sees, and mean
// nothing to a model). Unicode tag characters (U+E0020-U+E007E) are invisible copies of
// ASCII, a known way to smuggle instructions past a person: they are revealed as the ASCII
// they encode, so that the guard reads what the model would.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

void reveal_invisible(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

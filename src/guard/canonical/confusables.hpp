#pragma once
// Look-alike letters (homoglyphs): Cyrillic and Greek letters drawn like Latin ones, used to
// spell an English word that a matcher — or a model's tokenizer — no longer recognises
// ("іgnоrе" with Cyrillic і, о, е). A word that mixes such letters with Latin ones, or is
// made only of them inside a Latin-script text, is folded to Latin; a Russian or Greek word
// among its own script's words is left alone.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

void fold_confusables(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

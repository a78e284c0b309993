#pragma once
// Unicode compatibility folding (NFKC, one code point at a time so that each keeps its
// place in the original): full-width letters, mathematical bold/italic/script letters,
// circled and squared letters, ligatures and superscripts become the plain characters they
// are styled from — "𝐢𝐠𝐧𝐨𝐫𝐞" reads "ignore".

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

void fold_compatibility(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

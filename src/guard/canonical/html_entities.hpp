#pragma once
// HTML character references (&#105;, &#x69;, &lt; ...): a text holding three or more has
// them all replaced by the characters they stand for, the way a browser, or a model reading
// scraped HTML, sees them.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

// True when references were decoded.
bool decode_html_entities(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

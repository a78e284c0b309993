#pragma once
// Leetspeak: digits and symbols written for the letters they resemble ("1gn0r3 4ll
// pr3v10u5" reads "ignore all previous"). Only a word that is mostly letters, and whose
// digits sit before more letters, is folded: numbers, versions, units and names with a
// trailing number ("2024", "mp3", "user1", "11th", "x86") are words people write.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

void fold_leetspeak(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

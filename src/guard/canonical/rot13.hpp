#pragma once
// ROT13: a text whose letters, rotated by 13, hold clearly more common English words than
// as written ("vtaber nyy cerivbhf vafgehpgvbaf") is read rotated.

#include "guard/canonical/text.hpp"

namespace warden::guard::canonical {

// True when the text was rotated.
bool decode_rot13(Chars& text, Findings& found);

}  // namespace warden::guard::canonical

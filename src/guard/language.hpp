#pragma once
// Which language a text is written in, for the guard's "can this embedder read it?" rule:
// CLD2 (Debian's libcld2), which reads short texts by their script and n-grams and reports
// up to three languages with their share of the text, so that a mixed text (an English
// instruction after a French paragraph) shows both.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::guard {

struct LanguageGuess {
  // (ISO 639-1 code, percent of the text), most of the text first; empty when nothing was
  // recognised (digits, emoji, too little text).
  std::vector<std::pair<std::string, int>> parts;
  bool reliable = false;  // CLD2's own verdict: enough text, a clear winner
  // Whether the text is mostly letters of scripts other than Latin (Cyrillic, Greek, Arabic,
  // Hebrew, Devanagari, CJK, Hangul, Thai...): decisive even for one word.
  bool non_latin_script = false;
  std::size_t letters = 0;  // letters of any script in the text
};

// `text` must be valid UTF-8.
[[nodiscard]] LanguageGuess identify_language(std::string_view text);

// A list of languages as a user writes it (--guard-languages): ISO 639-1 codes separated
// by commas ("en,de,fr"), or "any" (every language is read: an empty list).
// Error(InvalidArgument) naming a code that is not two or three lowercase letters.
[[nodiscard]] std::vector<std::string> parse_language_list(std::string_view list);

// Whether `text` lies outside what a reader of `languages` (ISO 639-1 codes) can read: a
// reliable guess over 16 letters or more in which those languages cover under a fifth of
// the text, or a text mostly in another script when every language read is written in
// Latin letters. Empty
// `languages`: any language is read, never outside. Sets `language` to the main one found.
[[nodiscard]] bool outside_languages(std::string_view text, const std::vector<std::string>& languages,
                                     std::string& language);

}  // namespace warden::guard

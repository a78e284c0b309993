#include "guard/language.hpp"

#include <cld2/public/compact_lang_det.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace CLD2 {
// Declared in CLD2's internal lang_script.h, which Debian does not install with the public
// header; exported by libcld2.
const char* LanguageCode(Language lang);
}  // namespace CLD2

namespace warden::guard {
namespace {

bool is_latin_letter(char32_t c) noexcept {
  return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= 0xC0 && c <= 0x24F) ||
         (c >= 0x1E00 && c <= 0x1EFF);
}

bool is_letter(char32_t c) noexcept {
  const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}

// Languages written in Latin letters, among those an embedder may declare.
constexpr std::array<std::string_view, 40> kLatinScript = {
    "af", "ca", "cs", "cy", "da", "de", "en", "eo", "es", "et", "eu", "fi", "fr", "ga",
    "gl", "hr", "hu", "id", "is", "it", "lt", "lv", "ms", "mt", "nl", "no", "pl", "pt",
    "ro", "sk", "sl", "sq", "sv", "sw", "tl", "tr", "vi", "az", "uz", "la"};

constexpr std::size_t kMinLatinLetters = 16;

bool latin_only(const std::vector<std::string>& languages) {
  return std::all_of(languages.begin(), languages.end(), [](const std::string& l) {
    return std::find(kLatinScript.begin(), kLatinScript.end(), l) != kLatinScript.end();
  });
}

}  // namespace

LanguageGuess identify_language(std::string_view text) {
  LanguageGuess g;
  std::size_t letters = 0;
  std::size_t latin = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = utf8::next(text, pos);
    if (!is_letter(c)) continue;
    ++letters;
    latin += is_latin_letter(c) ? 1 : 0;
  }
  g.non_latin_script = letters > 0 && latin * 2 < letters;
  g.letters = letters;
  CLD2::Language language3[3];
  int percent3[3] = {0, 0, 0};
  int text_bytes = 0;
  bool reliable = false;
  const auto length = static_cast<int>(std::min<std::size_t>(text.size(), 1U << 20));
  CLD2::DetectLanguageSummary(text.data(), length, true, language3, percent3, &text_bytes, &reliable);
  g.reliable = reliable;
  for (int i = 0; i < 3; ++i) {
    if (language3[i] == CLD2::UNKNOWN_LANGUAGE || percent3[i] <= 0) continue;
    std::string code = CLD2::LanguageCode(language3[i]);
    if (code.size() < 2 || code.rfind("xx", 0) == 0) continue;  // CLD2's "unknown" and script-only codes
    // CLD2 names a few languages by longer codes ("zh-Hant", "sr-ME"): the language is the prefix.
    code = code.substr(0, code.find('-'));
    g.parts.emplace_back(std::move(code), percent3[i]);
  }
  return g;
}

bool outside_languages(std::string_view text, const std::vector<std::string>& languages,
                       std::string& language) {
  if (languages.empty()) return false;
  const LanguageGuess g = identify_language(text);
  if (!g.parts.empty()) language = g.parts.front().first;
  if (g.non_latin_script && latin_only(languages)) {
    if (language.empty()) language = "a non-Latin script";
    return true;
  }
  // A few Latin letters ("go ahead", "longer") are too little to tell English from Irish or
  // Danish, whatever CLD2 says.
  if (!g.reliable || g.parts.empty() || g.letters < kMinLatinLetters) return false;
  int covered = 0;
  for (const auto& [code, percent] : g.parts) {
    if (std::find(languages.begin(), languages.end(), code) != languages.end()) covered += percent;
  }
  return covered < 20;
}

std::vector<std::string> parse_language_list(std::string_view list) {
  if (list == "any") return {};
  std::vector<std::string> out;
  for (std::size_t a = 0; a <= list.size();) {
    const std::size_t b = std::min(list.find(',', a), list.size());
    const std::string_view code = list.substr(a, b - a);
    if (code.size() < 2 || code.size() > 3 ||
        !std::all_of(code.begin(), code.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
      throw Error(
          ErrorKind::InvalidArgument,
          fmt::format("'{}' is not a language code: give lowercase ISO 639-1 codes separated by commas "
                      "(en,de) or \"any\"",
                      code));
    }
    out.emplace_back(code);
    a = b + 1;
  }
  return out;
}

}  // namespace warden::guard

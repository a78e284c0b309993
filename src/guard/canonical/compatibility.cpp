#include "guard/canonical/compatibility.hpp"

#include <utf8proc.h>

#include <fmt/format.h>

namespace warden::guard::canonical {
namespace {

// Letters styled to look different: what a reader of the evidence should hear about
// (a ligature or a "…" folded is no disguise).
bool is_styled_letter(char32_t c) noexcept {
  return (c >= 0xFF01 && c <= 0xFF5E) ||    // full-width ASCII
         (c >= 0x1D400 && c <= 0x1D7FF) ||  // mathematical alphanumerics
         (c >= 0x2460 && c <= 0x24FF) ||    // enclosed alphanumerics
         (c >= 0x1F130 && c <= 0x1F189);    // squared and negative letters
}

}  // namespace

void fold_compatibility(Chars& text, Findings& found) {
  Chars out;
  out.reserve(text.size());
  std::size_t styled = 0;
  for (const Char& c : text) {
    if (c.cp < 0xA0) {
      out.push_back(c);
      continue;
    }
    utf8proc_int32_t buf[32];
    int boundclass = 0;
    const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
    utf8proc_ssize_t n =
        utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c.cp), buf, 32, options, &boundclass);
    if (n <= 0 || n > 32) {
      out.push_back(c);
      continue;
    }
    n = utf8proc_normalize_utf32(buf, n, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE));
    if (n == 1 && static_cast<char32_t>(buf[0]) == c.cp) {
      out.push_back(c);
      continue;
    }
    if (is_styled_letter(c.cp)) ++styled;
    for (utf8proc_ssize_t k = 0; k < n; ++k) out.push_back({static_cast<char32_t>(buf[k]), c.source});
  }
  if (styled >= 3) found.note(fmt::format("styled or full-width letters ({})", styled));
  text = std::move(out);
}

}  // namespace warden::guard::canonical

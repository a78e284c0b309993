#include "guard/canonical/text.hpp"

#include <fmt/format.h>

#include "core/utf8.hpp"

namespace warden::guard::canonical {

Chars to_chars(std::string_view text) {
  Chars out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto at = static_cast<std::uint32_t>(pos);
    out.push_back({utf8::next(text, pos), at});
  }
  return out;
}

std::string to_utf8(const Chars& text) {
  std::string out;
  out.reserve(text.size());
  for (const Char& c : text) utf8::append(out, c.cp);
  return out;
}

// At most this many entries: a text made of thousands of encoded spans is still described
// in a few lines.
constexpr std::size_t kMaxEvidence = 16;

void Findings::note(std::string what) {
  for (const std::string& e : evidence_) {
    if (e == what) return;
  }
  if (evidence_.size() < kMaxEvidence) {
    evidence_.push_back(std::move(what));
  } else if (++dropped_ == 1) {
    evidence_.push_back("more of the same");
  }
}

void Findings::note_span(std::string_view kind, std::uint32_t begin, std::uint32_t end) {
  // Past the cap before counting code points: a text of many spans must stay linear.
  if (evidence_.size() >= kMaxEvidence) {
    note(std::string(kind));
    return;
  }
  const auto cp = [this](std::uint32_t byte) {
    return utf8::code_points(original_.substr(0, std::min<std::size_t>(byte, original_.size())));
  };
  note(fmt::format("{} at {}-{}", kind, cp(begin), cp(end)));
}

void append_decoded(Chars& out, std::uint32_t source, std::string_view decoded) {
  for (std::size_t pos = 0; pos < decoded.size();) out.push_back({utf8::next(decoded, pos), source});
}

bool looks_like_encoding(std::string_view bytes) {
  if (bytes.size() < 16) return false;
  for (const char ch : bytes) {
    const bool ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    ch == '+' || ch == '/' || ch == '=' || ch == '_' || ch == '-' || ch == '%' ||
                    ch == '\\' || ch == ' ';
    if (!ok) return false;
  }
  return true;
}

bool looks_like_text(std::string_view bytes, std::size_t min_length) {
  if (bytes.size() < min_length || utf8::find_invalid(bytes)) return false;
  std::size_t good = 0;
  std::size_t letters = 0;
  std::size_t total = 0;
  for (std::size_t pos = 0; pos < bytes.size();) {
    const char32_t c = utf8::next(bytes, pos);
    ++total;
    if (c >= 0x80) {
      good += c >= 0xA0 ? 1 : 0;  // C1 controls are no text
      letters += c >= 0xA0 ? 1 : 0;
      continue;
    }
    if (is_ascii_letter(c)) ++letters;
    if ((c >= 0x20 && c < 0x7F) || c == U'\n' || c == U'\t' || c == U'\r') ++good;
  }
  // Nearly all printable, and mostly letters: random bytes that happen to be UTF-8 are not.
  return good * 20 >= total * 19 && letters * 2 >= total;
}

}  // namespace warden::guard::canonical

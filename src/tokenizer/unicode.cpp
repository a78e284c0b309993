#include "tokenizer/unicode.hpp"

#include <utf8proc.h>

#include <algorithm>

#include "core/utf8.hpp"

namespace warden::tokenizer::detail {

void NormText::push(char32_t cp, Align a) {
  const std::size_t before = bytes.size();
  utf8::append(bytes, cp);
  align.insert(align.end(), bytes.size() - before, a);
}

void NormText::append_range(const NormText& from, std::size_t b, std::size_t e) {
  bytes.append(from.bytes, b, e - b);
  align.insert(align.end(), from.align.begin() + static_cast<std::ptrdiff_t>(b),
               from.align.begin() + static_cast<std::ptrdiff_t>(e));
}

namespace uni {

namespace {
inline utf8proc_int32_t i32(char32_t c) {
  return static_cast<utf8proc_int32_t>(c);
}
}  // namespace

int category(char32_t c) noexcept {
  return static_cast<int>(utf8proc_category(i32(c)));
}

bool is_other(char32_t c) noexcept {
  switch (utf8proc_category(i32(c))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
      return true;
    default:
      return false;
  }
}

bool is_punctuation(char32_t c) noexcept {
  const auto cat = utf8proc_category(i32(c));
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool is_mark_nonspacing(char32_t c) noexcept {
  return utf8proc_category(i32(c)) == UTF8PROC_CATEGORY_MN;
}

bool is_mark(char32_t c) noexcept {
  const auto cat = utf8proc_category(i32(c));
  return cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME;
}

bool is_letter(char32_t c) noexcept {
  if (c < 0x80) return (c | 0x20U) >= 'a' && (c | 0x20U) <= 'z';
  const auto cat = utf8proc_category(i32(c));
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}

bool is_number(char32_t c) noexcept {
  if (c < 0x80) return c >= '0' && c <= '9';
  const auto cat = utf8proc_category(i32(c));
  return cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO;
}

bool is_alphanumeric(char32_t c) noexcept {
  return is_letter(c) || is_number(c);
}

bool is_word(char32_t c) noexcept {
  if (c < 0x80) return is_letter(c) || (c >= '0' && c <= '9') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  const auto cat = utf8proc_category(i32(c));
  return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
         (cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME) || cat == UTF8PROC_CATEGORY_ND ||
         cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_PC;
}

int to_lower(char32_t c, char32_t out[3]) noexcept {
  if (c < 0x80) {
    out[0] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
    return 1;
  }
  if (c == 0x130) {
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(utf8proc_tolower(i32(c)));
  return 1;
}

int to_upper(char32_t c, char32_t out[3]) noexcept {
  if (c < 0x80) {
    out[0] = (c >= 'a' && c <= 'z') ? c - 32 : c;
    return 1;
  }
  out[0] = static_cast<char32_t>(utf8proc_toupper(i32(c)));
  return 1;
}

namespace {

thread_local std::vector<int> t_changes, t_changes2;

int ccc(char32_t c) {
  if (c < 0x300) return 0;
  return utf8proc_get_property(i32(c))->combining_class;
}

// The primary composite of a + b, or 0.
char32_t compose_pair(char32_t a, char32_t b) {
  if (b < 0x300) return 0;  // no composition has a second character below U+0300
  constexpr char32_t SBase = 0xAC00, LBase = 0x1100, VBase = 0x1161, TBase = 0x11A7;
  if (a >= LBase && a < LBase + 19 && b >= VBase && b < VBase + 21) {
    return SBase + ((a - LBase) * 21 + (b - VBase)) * 28;
  }
  if (a >= SBase && a < SBase + 11172 && (a - SBase) % 28 == 0 && b > TBase && b < TBase + 28) {
    return a + (b - TBase);
  }
  utf8proc_int32_t buf[2] = {i32(a), i32(b)};
  const auto n = utf8proc_normalize_utf32(buf, 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE));
  return n == 1 ? static_cast<char32_t>(buf[0]) : 0;
}

}  // namespace

// Alignments follow HF's NormalizedString::transform exactly: every output character
// carries a "change" (0: replaces the next source character, +1: inserted, -n: also
// absorbs n more), changes travel with the characters through canonical reordering and
// composition, and alignments are then handed out by consuming the source characters in
// order. So a reordered mark takes the alignment of the position it moved into.
void normalize(NormText& text, Form form, Workspace& ws) {
  const auto& in = text.bytes;
  if (std::all_of(in.begin(), in.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x80; })) {
    return;  // ASCII is invariant under every normalization form
  }
  const bool compat = form == Form::NFKC || form == Form::NFKD;
  const bool comp = form == Form::NFC || form == Form::NFKC;
  auto& cps = ws.cps;
  auto& src = ws.cp_align;  // alignment of every source character, in order
  auto& chg = t_changes;
  cps.clear();
  src.clear();
  chg.clear();
  // Decompose.
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0));
  for (std::size_t pos = 0; pos < in.size();) {
    src.push_back(text.align[pos]);
    const char32_t c = utf8::next(in, pos);
    utf8proc_int32_t buf[32];
    utf8proc_ssize_t n = 0;
    if (c >= 0x80) {
      int boundclass = 0;
      n = utf8proc_decompose_char(i32(c), buf, 32, options, &boundclass);
    }
    if (n <= 0 || n > 32) {
      cps.push_back(c);
      chg.push_back(0);
      continue;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k) {
      cps.push_back(static_cast<char32_t>(buf[k]));
      chg.push_back(k == 0 ? 0 : 1);
    }
  }
  // Canonical ordering: stable sort of every run of non-starters by combining class.
  // (A sort, not adjacent swaps, so 10,000 mixed marks stay O(n log n).)
  for (std::size_t i = 0; i < cps.size();) {
    if (ccc(cps[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < cps.size() && ccc(cps[j]) != 0) ++j;
    if (j - i > 1) {
      auto& idx = ws.u32a;
      idx.clear();
      for (std::size_t k = i; k < j; ++k) idx.push_back(static_cast<std::uint32_t>(k));
      std::stable_sort(idx.begin(), idx.end(),
                       [&](std::uint32_t x, std::uint32_t y) { return ccc(cps[x]) < ccc(cps[y]); });
      auto& tmp_c = ws.cps2;
      auto& tmp_g = t_changes2;
      tmp_c.clear();
      tmp_g.clear();
      for (const auto k : idx) {
        tmp_c.push_back(cps[k]);
        tmp_g.push_back(chg[k]);
      }
      std::copy(tmp_c.begin(), tmp_c.end(), cps.begin() + static_cast<std::ptrdiff_t>(i));
      std::copy(tmp_g.begin(), tmp_g.end(), chg.begin() + static_cast<std::ptrdiff_t>(i));
    }
    i = j;
  }
  // Canonical composition: an absorbed character's change folds into the starter's.
  std::size_t w = cps.size();
  if (comp) {
    w = 0;
    std::ptrdiff_t starter = -1;
    int last_cc = -1;  // -1: the previous kept character is the starter itself
    for (std::size_t i = 0; i < cps.size(); ++i) {
      const char32_t c = cps[i];
      const int cc = ccc(c);
      if (starter >= 0 && (last_cc == -1 || last_cc < cc)) {
        const auto s = static_cast<std::size_t>(starter);
        const char32_t composite = compose_pair(cps[s], c);
        if (composite != 0) {
          cps[s] = composite;
          chg[s] += chg[i] - 1;
          continue;
        }
      }
      if (cc == 0) {
        starter = static_cast<std::ptrdiff_t>(w);
        last_cc = -1;
      } else {
        last_cc = cc;
      }
      cps[w] = c;
      chg[w] = chg[i];
      ++w;
    }
  }
  NormText& out = ws.scratch;
  out.clear();
  std::size_t next = 0;  // the next source character to consume
  for (std::size_t i = 0; i < w; ++i) {
    Align a{};
    if (chg[i] > 0) {
      if (next > 0) a = src[next - 1];
    } else {
      if (next < src.size()) a = src[next];
      next += 1 + static_cast<std::size_t>(-chg[i]);
    }
    out.push(cps[i], a);
  }
  std::swap(text, out);
}

}  // namespace uni
}  // namespace warden::tokenizer::detail

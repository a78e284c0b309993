// Normalizers: BertNormalizer, NFC/NFD/NFKC/NFKD, Lowercase, StripAccents, Strip, Replace,
// Prepend, Sequence (Precompiled lives in precompiled.cpp). Each rewrites a NormText in
// place, keeping the per-byte alignment to the original text.

#include "tokenizer/components.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/unicode.hpp"

namespace warden::tokenizer::detail {

namespace {

bool all_ascii(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Rewrites every character through f(c, align, out), which appends what replaces it.
template <class F>
void map_chars(NormText& text, Workspace& ws, F&& f) {
  NormText& out = ws.scratch;
  out.clear();
  out.bytes.reserve(text.size());
  out.align.reserve(text.size());
  const std::string& s = text.bytes;
  for (std::size_t pos = 0; pos < s.size();) {
    const Align a = text.align[pos];
    const char32_t c = utf8::next(s, pos);
    f(c, a, out);
  }
  std::swap(text, out);
}

class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool chinese, bool strip_accents, bool lowercase)
      : clean_(clean_text), chinese_(chinese), strip_(strip_accents), lower_(lowercase) {}

  void normalize(NormText& text, Workspace& ws) const override {
    if (all_ascii(text.bytes)) {
      // One pass: the ASCII subset of clean_text + lowercase (NFD is the identity here).
      NormText& out = ws.scratch;
      out.clear();
      for (std::size_t i = 0; i < text.size(); ++i) {
        auto c = static_cast<unsigned char>(text.bytes[i]);
        if (clean_) {
          if (c == '\t' || c == '\n' || c == '\r') {
            c = ' ';
          } else if (c < 0x20 || c == 0x7F) {
            continue;
          }
        }
        if (lower_ && c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c + 32);
        out.push_ascii(static_cast<char>(c), text.align[i]);
      }
      std::swap(text, out);
      return;
    }
    if (clean_) {
      map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
        if (c == 0 || c == 0xFFFD) return;
        // HF filters "control" characters (every C* category except \t \n \r) before it
        // maps whitespace, so U+0085, though White_Space, is deleted.
        if (c != '\t' && c != '\n' && c != '\r' && uni::is_other(c)) return;
        out.push(uni::is_whitespace(c) ? U' ' : c, a);
      });
    }
    if (chinese_) {
      map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
        if (uni::is_chinese(c)) {
          out.push_ascii(' ', a);
          out.push(c, a);
          out.push_ascii(' ', a);
        } else {
          out.push(c, a);
        }
      });
    }
    if (strip_) {
      uni::normalize(text, uni::Form::NFD, ws);
      map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
        if (c < 0x300 || !uni::is_mark_nonspacing(c)) out.push(c, a);
      });
    }
    if (lower_) {
      map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
        char32_t buf[3];
        const int n = uni::to_lower(c, buf);
        for (int k = 0; k < n; ++k) out.push(buf[k], a);
      });
    }
  }

 private:
  bool clean_, chinese_, strip_, lower_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(uni::Form form) : form_(form) {}
  void normalize(NormText& text, Workspace& ws) const override { uni::normalize(text, form_, ws); }

 private:
  uni::Form form_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(NormText& text, Workspace& ws) const override {
    if (all_ascii(text.bytes)) {
      for (auto& ch : text.bytes) {
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
      }
      return;
    }
    map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
      char32_t buf[3];
      const int n = uni::to_lower(c, buf);
      for (int k = 0; k < n; ++k) out.push(buf[k], a);
    });
  }
};

// HF's StripAccents removes every combining mark (M*: Mn, Mc, Me), unlike BertNormalizer's
// strip_accents, which removes only Mn.
class StripAccents final : public Normalizer {
 public:
  void normalize(NormText& text, Workspace& ws) const override {
    if (all_ascii(text.bytes)) return;
    map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
      if (c < 0x300 || !uni::is_mark(c)) out.push(c, a);
    });
  }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormText& text, Workspace& ws) const override {
    const std::string& s = text.bytes;
    std::size_t b = 0;
    std::size_t e = s.size();
    if (left_) {
      while (b < e) {
        std::size_t p = b;
        if (!uni::is_whitespace(utf8::next(s, p))) break;
        b = p;
      }
    }
    if (right_) {
      while (e > b) {
        std::size_t p = e - 1;
        while (p > b && (static_cast<unsigned char>(s[p]) & 0xC0U) == 0x80U) --p;
        std::size_t q = p;
        if (!uni::is_whitespace(utf8::next(s, q))) break;
        e = p;
      }
    }
    if (b == 0 && e == s.size()) return;
    NormText& out = ws.scratch;
    out.clear();
    out.append_range(text, b, e);
    std::swap(text, out);
  }

 private:
  bool left_, right_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string s) : prepend_(std::move(s)) {}
  void normalize(NormText& text, Workspace& ws) const override {
    if (text.bytes.empty()) return;
    NormText& out = ws.scratch;
    out.clear();
    const Align a = text.align[0];
    out.bytes.append(prepend_);
    out.align.insert(out.align.end(), prepend_.size(), a);
    out.append_range(text, 0, text.size());
    std::swap(text, out);
  }

 private:
  std::string prepend_;
};

class Replace final : public Normalizer {
 public:
  Replace(std::unique_ptr<Pattern> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(NormText& text, Workspace& ws) const override {
    auto& matches = ws.u32b;
    matches.clear();
    pattern_->find_all(text.bytes, matches);
    if (matches.empty()) return;
    NormText& out = ws.scratch;
    out.clear();
    std::size_t last = 0;
    for (std::size_t m = 0; m + 1 < matches.size(); m += 2) {
      const std::size_t b = matches[m];
      const std::size_t e = matches[m + 1];
      out.append_range(text, last, b);
      // HF treats the replacement as inserted after the removed match: every byte takes the
      // alignment of the match's last byte.
      const Align a = e > 0 ? text.align[e - 1] : Align{};
      out.bytes.append(content_);
      out.align.insert(out.align.end(), content_.size(), a);
      last = e;
    }
    out.append_range(text, last, text.size());
    std::swap(text, out);
  }

 private:
  std::unique_ptr<Pattern> pattern_;
  std::string content_;
};

// HF's Nmt: drop some ASCII controls, map other "space-like" code points to ' '.
class Nmt final : public Normalizer {
 public:
  void normalize(NormText& text, Workspace& ws) const override {
    map_chars(text, ws, [](char32_t c, Align a, NormText& out) {
      if ((c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || c == 0x7F || c == 0x8F ||
          c == 0x9F)
        return;
      const bool space = c == 0x9 || c == 0xA || c == 0xC || c == 0xD || c == 0x1680 ||
                         (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 ||
                         c == 0xFEFF || c == 0xFFFD;
      out.push(space ? U' ' : c, a);
    });
  }
};

// The ByteLevel normalizer: every byte becomes its GPT-2 byte-level character.
class ByteLevelNorm final : public Normalizer {
 public:
  void normalize(NormText& text, Workspace& ws) const override {
    NormText& out = ws.scratch;
    out.clear();
    for (std::size_t i = 0; i < text.size(); ++i) {
      out.push(byte_to_char(static_cast<unsigned char>(text.bytes[i])), text.align[i]);
    }
    std::swap(text, out);
  }
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  void normalize(NormText& text, Workspace& ws) const override {
    for (const auto& p : parts_) p->normalize(text, ws);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

std::unique_ptr<Normalizer> make_bert_normalizer(bool clean_text, bool chinese, bool strip_accents,
                                                 bool lowercase) {
  return std::make_unique<BertNormalizer>(clean_text, chinese, strip_accents, lowercase);
}

std::unique_ptr<Normalizer> make_normalizer(const json::Value& v) {
  const std::string type = v.type_name("normalizer");
  if (type == "BertNormalizer") {
    const bool lowercase = v.get_bool("lowercase", true);
    const auto strip = v.get_optional_bool("strip_accents");
    return make_bert_normalizer(v.get_bool("clean_text", true), v.get_bool("handle_chinese_chars", true),
                                strip.value_or(lowercase), lowercase);
  }
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(uni::Form::NFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(uni::Form::NFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(uni::Form::NFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(uni::Form::NFKD);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Strip")
    return std::make_unique<Strip>(v.get_bool("strip_left", true), v.get_bool("strip_right", true));
  if (type == "Prepend") return std::make_unique<Prepend>(v.get_string("prepend"));
  if (type == "Replace")
    return std::make_unique<Replace>(make_pattern(v.at("pattern"), "Replace normalizer"),
                                     v.get_string("content"));
  if (type == "Precompiled") return make_precompiled(v);
  if (type == "Nmt") return std::make_unique<Nmt>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelNorm>();
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (const auto& item : v.at("normalizers").items()) parts.push_back(make_normalizer(item));
    return std::make_unique<Sequence>(std::move(parts));
  }
  throw Error(ErrorKind::Unsupported, fmt::format("tokenizer.json: unsupported normalizer type '{}'", type));
}

}  // namespace warden::tokenizer::detail

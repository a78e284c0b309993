// Decoders (ids -> text for /decode): WordPiece, Metaspace, ByteLevel, Replace, Strip, Fuse,
// ByteFallback, BPEDecoder, Sequence, with HF's decode_chain semantics.

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/components.hpp"

namespace warden::tokenizer::detail {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  if (pos == 0) return;
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}

// Bytes to text like Rust's String::from_utf8_lossy: each maximal invalid subsequence (a
// stray byte, or the valid prefix of a truncated sequence) becomes one U+FFFD.
std::string lossy(std::string_view bytes) {
  std::string out;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[pos]);
    std::size_t need = 0;
    if (lead < 0x80) {
      need = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      need = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      need = 3;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      need = 4;
    }
    if (need == 0) {
      out.append("\xEF\xBF\xBD");
      ++pos;
      continue;
    }
    std::size_t k = 1;
    while (k < need && pos + k < bytes.size()) {
      const auto b = static_cast<unsigned char>(bytes[pos + k]);
      unsigned lo = 0x80, hi = 0xBF;
      if (k == 1) {
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
      }
      if (b < lo || b > hi) break;
      ++k;
    }
    if (k == need) {
      out.append(bytes.substr(pos, k));
    } else {
      out.append("\xEF\xBF\xBD");
    }
    pos += k;
  }
  return out;
}

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (!prefix_.empty() && t.compare(0, prefix_.size(), prefix_) == 0) {
          t.erase(0, prefix_.size());
        } else {
          t.insert(t.begin(), ' ');
        }
      }
      if (cleanup_) {
        replace_all(t, " .", ".");
        replace_all(t, " ?", "?");
        replace_all(t, " !", "!");
        replace_all(t, " ,", ",");
        replace_all(t, " ' ", "'");
        replace_all(t, " n't", "n't");
        replace_all(t, " 'm", "'m");
        replace_all(t, " do not", " don't");
        replace_all(t, " 's", "'s");
        replace_all(t, " 've", "'ve");
        replace_all(t, " 're", "'re");
      }
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string rep, bool prepend) : rep_(std::move(rep)), prepend_(prepend) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      replace_all(tokens[i], rep_, " ");
      if (i == 0 && prepend_ && !tokens[i].empty() && tokens[i][0] == ' ') tokens[i].erase(0, 1);
    }
  }

 private:
  std::string rep_;
  bool prepend_;
};

class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      for (std::size_t pos = 0; pos < t.size();) {
        const std::size_t start = pos;
        const char32_t c = utf8::next(t, pos);
        const int b = char_to_byte(c);
        if (b >= 0) {
          bytes.push_back(static_cast<char>(b));
        } else {
          bytes.append(t, start, pos - start);
        }
      }
    }
    tokens.assign(1, lossy(bytes));
  }
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(std::unique_ptr<Pattern> pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::uint32_t> m;
    for (auto& t : tokens) {
      m.clear();
      pattern_->find_all(t, m);
      if (m.empty()) continue;
      std::string out;
      std::size_t last = 0;
      for (std::size_t i = 0; i + 1 < m.size(); i += 2) {
        out.append(t, last, m[i] - last);
        out.append(content_);
        last = m[i + 1];
      }
      out.append(t, last, std::string::npos);
      t = std::move(out);
    }
  }

 private:
  std::unique_ptr<Pattern> pattern_;
  std::string content_;
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string content, std::size_t start, std::size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    if (content_.empty()) return;
    for (auto& t : tokens) {
      std::size_t b = 0;
      for (std::size_t k = 0; k < start_ && t.compare(b, content_.size(), content_) == 0; ++k)
        b += content_.size();
      std::size_t e = t.size();
      for (std::size_t k = 0; k < stop_ && e >= b + content_.size() &&
                              t.compare(e - content_.size(), content_.size(), content_) == 0;
           ++k) {
        e -= content_.size();
      }
      t = t.substr(b, e - b);
    }
  }

 private:
  std::string content_;
  std::size_t start_, stop_;
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    std::size_t pending_count = 0;
    auto flush = [&] {
      if (pending_count == 0) return;
      if (utf8::find_invalid(pending)) {
        for (std::size_t k = 0; k < pending_count; ++k) out.emplace_back("\xEF\xBF\xBD");
      } else {
        out.push_back(pending);
      }
      pending.clear();
      pending_count = 0;
    };
    for (auto& t : tokens) {
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
        unsigned value = 0;
        bool ok = true;
        for (std::size_t k = 3; k < 5; ++k) {
          const char c = t[k];
          value <<= 4;
          if (c >= '0' && c <= '9') {
            value |= static_cast<unsigned>(c - '0');
          } else if (c >= 'A' && c <= 'F') {
            value |= static_cast<unsigned>(c - 'A' + 10);
          } else {
            ok = false;
          }
        }
        if (ok) {
          pending.push_back(static_cast<char>(value));
          ++pending_count;
          continue;
        }
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    tokens = std::move(out);
  }
};

class BpeDecoder final : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
    }
  }

 private:
  std::string suffix_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts) : parts_(std::move(parts)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& p : parts_) p->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

}  // namespace

std::unique_ptr<Decoder> make_wordpiece_decoder(std::string prefix, bool cleanup) {
  return std::make_unique<WordPieceDecoder>(std::move(prefix), cleanup);
}

std::unique_ptr<Decoder> make_decoder(const json::Value& v) {
  const std::string type = v.type_name("decoder");
  if (type == "WordPiece")
    return make_wordpiece_decoder(v.get_string_or("prefix", "##"), v.get_bool("cleanup", true));
  if (type == "Metaspace") {
    bool prepend = v.get_bool("add_prefix_space", true);
    if (auto s = v.find("prepend_scheme")) prepend = s->as_string("prepend_scheme") != "never";
    return std::make_unique<MetaspaceDecoder>(v.get_string_or("replacement", "\xE2\x96\x81"), prepend);
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(make_pattern(v.at("pattern"), "Replace decoder"),
                                            v.get_string("content"));
  }
  if (type == "Strip") {
    return std::make_unique<StripDecoder>(
        v.get_string("content"),
        static_cast<std::size_t>(std::max<std::int64_t>(0, v.get_optional_int("start").value_or(0))),
        static_cast<std::size_t>(std::max<std::int64_t>(0, v.get_optional_int("stop").value_or(0))));
  }
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "BPEDecoder") return std::make_unique<BpeDecoder>(v.get_string_or("suffix", "</w>"));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> parts;
    for (const auto& item : v.at("decoders").items()) parts.push_back(make_decoder(item));
    return std::make_unique<SequenceDecoder>(std::move(parts));
  }
  throw Error(ErrorKind::Unsupported, fmt::format("tokenizer.json: unsupported decoder type '{}'", type));
}

}  // namespace warden::tokenizer::detail

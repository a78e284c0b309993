// Pre-tokenizers: BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits,
// Metaspace, ByteLevel, Split, Sequence. Each splits the text pieces of the workspace
// (and Metaspace/ByteLevel also rewrite their bytes) following HF's
// SplitDelimiterBehavior semantics exactly, including its treatment of adjacent matches.

#include <fmt/format.h>

#include <array>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/components.hpp"
#include "tokenizer/unicode.hpp"

namespace warden::tokenizer::detail {

namespace {

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior parse_behavior(std::string_view s) {
  if (s == "Removed") return Behavior::Removed;
  if (s == "Isolated") return Behavior::Isolated;
  if (s == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (s == "MergedWithNext") return Behavior::MergedWithNext;
  if (s == "Contiguous") return Behavior::Contiguous;
  throw Error(ErrorKind::Unsupported, fmt::format("tokenizer.json: unsupported split behavior '{}'", s));
}

struct Span {
  std::uint32_t b, e;
  bool match;
};

// Emits the non-empty pieces HF's NormalizedString::split produces for `spans` (which
// cover [begin, end) in order: gaps are match = false).
void emit(std::vector<Span>& spans, Behavior behavior, std::vector<Piece>& out) {
  auto push = [&](std::uint32_t b, std::uint32_t e) {
    if (e > b) out.push_back(Piece{b, e, -1, {}});
  };
  switch (behavior) {
    case Behavior::Removed:
      for (const auto& s : spans) {
        if (!s.match) push(s.b, s.e);
      }
      return;
    case Behavior::Isolated:
      for (const auto& s : spans) push(s.b, s.e);
      return;
    case Behavior::Contiguous: {
      bool prev = false;
      std::size_t w = 0;
      for (std::size_t i = 0; i < spans.size(); ++i) {
        if (w > 0 && spans[i].match == prev) {
          spans[w - 1].e = spans[i].e;
        } else {
          spans[w++] = spans[i];
        }
        prev = spans[i].match;
      }
      for (std::size_t i = 0; i < w; ++i) push(spans[i].b, spans[i].e);
      return;
    }
    case Behavior::MergedWithPrevious: {
      bool prev = false;
      std::size_t w = 0;
      for (std::size_t i = 0; i < spans.size(); ++i) {
        if (spans[i].match && !prev && w > 0) {
          spans[w - 1].e = spans[i].e;
        } else {
          spans[w++] = spans[i];
        }
        prev = spans[i].match;
      }
      for (std::size_t i = 0; i < w; ++i) push(spans[i].b, spans[i].e);
      return;
    }
    case Behavior::MergedWithNext: {
      // HF folds from the right: a match joins the piece after it unless the piece after
      // it is itself a match.
      bool prev = false;
      std::size_t w = spans.size();
      for (std::size_t i = spans.size(); i-- > 0;) {
        if (spans[i].match && !prev && w < spans.size()) {
          spans[w].b = spans[i].b;
        } else {
          spans[--w] = spans[i];
        }
        prev = spans[i].match;
      }
      for (std::size_t i = w; i < spans.size(); ++i) push(spans[i].b, spans[i].e);
      return;
    }
  }
}

// Splits [b, e) of `s` where pred(c) holds, one span per matching character.
template <class Pred>
void char_spans(std::string_view s, std::uint32_t b, std::uint32_t e, Pred&& pred, std::vector<Span>& spans) {
  spans.clear();
  std::uint32_t last = b;
  for (std::size_t pos = b; pos < e;) {
    const std::size_t start = pos;
    const char32_t c = utf8::next(s, pos);
    if (pred(c)) {
      if (last < start) spans.push_back({last, static_cast<std::uint32_t>(start), false});
      spans.push_back({static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(pos), true});
      last = static_cast<std::uint32_t>(pos);
    }
  }
  if (last < e) spans.push_back({last, e, false});
}

thread_local std::vector<Span> t_spans;

template <class Fn>
void for_each_text_piece(Workspace& ws, Fn&& fn) {
  ws.pieces_tmp.clear();
  for (const Piece& p : ws.pieces) {
    if (p.added_id >= 0) {
      ws.pieces_tmp.push_back(p);
    } else {
      fn(p, ws.pieces_tmp);
    }
  }
  std::swap(ws.pieces, ws.pieces_tmp);
}

template <class Pred>
class CharSplit final : public PreTokenizer {
 public:
  CharSplit(Pred pred, Behavior behavior) : pred_(pred), behavior_(behavior) {}
  void pre_tokenize(Workspace& ws) const override {
    for_each_text_piece(ws, [&](const Piece& p, std::vector<Piece>& out) {
      char_spans(ws.text.bytes, p.begin, p.end, pred_, t_spans);
      emit(t_spans, behavior_, out);
    });
  }

 private:
  Pred pred_;
  Behavior behavior_;
};

template <class Pred>
std::unique_ptr<PreTokenizer> make_char_split(Pred pred, Behavior b) {
  return std::make_unique<CharSplit<Pred>>(pred, b);
}

// BertPreTokenizer: split on whitespace (removed), then on punctuation (isolated). One
// fused pass with an ASCII table, which gives the same pieces as the two HF passes.
class BertPreTokenizer final : public PreTokenizer {
 public:
  BertPreTokenizer() {
    for (unsigned c = 0; c < 128; ++c) {
      cls_[c] = uni::is_whitespace(c) ? 1 : (uni::is_ascii_punct(c) ? 2 : 0);
    }
  }
  void pre_tokenize(Workspace& ws) const override {
    const std::string& s = ws.text.bytes;
    for_each_text_piece(ws, [&](const Piece& p, std::vector<Piece>& out) {
      std::uint32_t word = p.begin;
      for (std::size_t pos = p.begin; pos < p.end;) {
        const auto start = static_cast<std::uint32_t>(pos);
        const auto b0 = static_cast<unsigned char>(s[pos]);
        int cls = 0;
        if (b0 < 0x80) {
          cls = cls_[b0];
          ++pos;
        } else {
          const char32_t c = utf8::next(s, pos);
          cls = uni::is_whitespace(c) ? 1 : (uni::is_punctuation(c) ? 2 : 0);
        }
        if (cls == 0) continue;
        if (word < start) out.push_back(Piece{word, start, -1, {}});
        if (cls == 2) out.push_back(Piece{start, static_cast<std::uint32_t>(pos), -1, {}});
        word = static_cast<std::uint32_t>(pos);
      }
      if (word < p.end) out.push_back(Piece{word, p.end, -1, {}});
    });
  }

 private:
  std::array<std::uint8_t, 128> cls_{};
};

// Whitespace: the regex \w+|[^\w\s]+ ; whitespace between matches is dropped.
class WhitespacePre final : public PreTokenizer {
 public:
  void pre_tokenize(Workspace& ws) const override {
    const std::string& s = ws.text.bytes;
    for_each_text_piece(ws, [&](const Piece& p, std::vector<Piece>& out) {
      int run = 0;  // 0 none, 1 word, 2 other
      std::uint32_t run_start = p.begin;
      for (std::size_t pos = p.begin; pos < p.end;) {
        const auto start = static_cast<std::uint32_t>(pos);
        const char32_t c = utf8::next(s, pos);
        const int cls = uni::is_word(c) ? 1 : (uni::is_whitespace(c) ? 0 : 2);
        if (cls != run) {
          if (run != 0) out.push_back(Piece{run_start, start, -1, {}});
          run = cls;
          run_start = start;
        }
      }
      if (run != 0) out.push_back(Piece{run_start, p.end, -1, {}});
    });
  }
};

class Metaspace final : public PreTokenizer {
 public:
  enum class Prepend { Always, First, Never };
  Metaspace(char32_t replacement, Prepend prepend, bool split)
      : replacement_(replacement), prepend_(prepend), split_(split) {
    utf8::append(rep_, replacement);
  }
  void pre_tokenize(Workspace& ws) const override {
    NormText& out = ws.scratch2;
    out.clear();
    ws.pieces_tmp.clear();
    const NormText& in = ws.text;
    for (const Piece& p : ws.pieces) {
      if (p.added_id >= 0) {
        const auto at = static_cast<std::uint32_t>(out.size());
        ws.pieces_tmp.push_back(Piece{at, at, p.added_id, p.orig});
        continue;
      }
      const auto nb = static_cast<std::uint32_t>(out.size());
      // replace(' ', rep), then prepend rep unless the text already starts with it.
      bool starts_with_rep = false;
      if (p.begin < p.end) {
        std::size_t q = p.begin;
        const char32_t first = utf8::next(in.bytes, q);
        starts_with_rep = first == ' ' || first == replacement_;
      }
      const bool want_prefix =
          p.begin < p.end && !starts_with_rep &&
          (prepend_ == Prepend::Always || (prepend_ == Prepend::First && in.align[p.begin].start == 0));
      if (want_prefix) {
        out.bytes.append(rep_);
        out.align.insert(out.align.end(), rep_.size(), in.align[p.begin]);
      }
      for (std::size_t i = p.begin; i < p.end; ++i) {
        if (in.bytes[i] == ' ') {
          out.bytes.append(rep_);
          out.align.insert(out.align.end(), rep_.size(), in.align[i]);
        } else {
          out.bytes.push_back(in.bytes[i]);
          out.align.push_back(in.align[i]);
        }
      }
      const auto ne = static_cast<std::uint32_t>(out.size());
      if (!split_) {
        if (ne > nb) ws.pieces_tmp.push_back(Piece{nb, ne, -1, {}});
        continue;
      }
      // Split with MergedWithNext on the replacement character.
      const std::string_view s = out.bytes;
      auto& spans = t_spans;
      spans.clear();
      std::uint32_t last = nb;
      for (std::size_t pos = nb; pos < ne;) {
        if (s.compare(pos, rep_.size(), rep_) == 0) {
          if (last < pos) spans.push_back({last, static_cast<std::uint32_t>(pos), false});
          spans.push_back(
              {static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + rep_.size()), true});
          pos += rep_.size();
          last = static_cast<std::uint32_t>(pos);
        } else {
          utf8::next(s, pos);
        }
      }
      if (last < ne) spans.push_back({last, ne, false});
      emit(spans, Behavior::MergedWithNext, ws.pieces_tmp);
    }
    std::swap(ws.text, out);
    std::swap(ws.pieces, ws.pieces_tmp);
  }

 private:
  char32_t replacement_;
  std::string rep_;
  Prepend prepend_;
  bool split_;
};

class SplitPre final : public PreTokenizer {
 public:
  SplitPre(std::unique_ptr<Pattern> pattern, Behavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(Workspace& ws) const override {
    const std::string_view s = ws.text.bytes;
    for_each_text_piece(ws, [&](const Piece& p, std::vector<Piece>& out) {
      spans_for(s.substr(p.begin, p.end - p.begin), p.begin, ws);
      emit(t_spans, behavior_, out);
    });
  }
  // Match spans of `text` (offset by `base`) into t_spans.
  void spans_for(std::string_view text, std::uint32_t base, Workspace& ws) const {
    auto& m = ws.u32b;
    m.clear();
    pattern_->find_all(text, m);
    auto& spans = t_spans;
    spans.clear();
    std::uint32_t last = 0;
    for (std::size_t i = 0; i + 1 < m.size(); i += 2) {
      if (last < m[i]) spans.push_back({base + last, base + m[i], invert_});
      spans.push_back({base + m[i], base + m[i + 1], !invert_});
      last = m[i + 1];
    }
    const auto n = static_cast<std::uint32_t>(text.size());
    if (last < n) spans.push_back({base + last, base + n, invert_});
  }

 private:
  std::unique_ptr<Pattern> pattern_;
  Behavior behavior_;
  bool invert_;
};

// GPT-2's pre-tokenization regex, used by ByteLevel(use_regex = true).
constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevelPre final : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        split_(use_regex
                   ? std::make_unique<SplitPre>(make_regex_pattern(kGpt2Regex), Behavior::Isolated, false)
                   : nullptr) {}
  void pre_tokenize(Workspace& ws) const override {
    NormText& out = ws.scratch2;
    out.clear();
    ws.pieces_tmp.clear();
    const NormText& in = ws.text;
    NormText& seg = ws.segment;
    auto& pieces = ws.pieces;
    for (const Piece& p : pieces) {
      if (p.added_id >= 0) {
        const auto at = static_cast<std::uint32_t>(out.size());
        ws.pieces_tmp.push_back(Piece{at, at, p.added_id, p.orig});
        continue;
      }
      seg.clear();
      if (add_prefix_space_ && p.begin < p.end && in.bytes[p.begin] != ' ') {
        seg.push_ascii(' ', in.align[p.begin]);
      }
      seg.append_range(in, p.begin, p.end);
      auto& sub = t_sub;
      sub.clear();
      if (split_) {
        split_->spans_for(seg.bytes, 0, ws);
        emit(t_spans, Behavior::Isolated, sub);
      } else if (!seg.bytes.empty()) {
        sub.push_back(Piece{0, static_cast<std::uint32_t>(seg.size()), -1, {}});
      }
      for (const Piece& q : sub) {
        const auto nb = static_cast<std::uint32_t>(out.size());
        for (std::uint32_t i = q.begin; i < q.end; ++i) {
          const char32_t c = byte_to_char(static_cast<unsigned char>(seg.bytes[i]));
          out.push(c, seg.align[i]);
        }
        ws.pieces_tmp.push_back(Piece{nb, static_cast<std::uint32_t>(out.size()), -1, {}});
      }
    }
    std::swap(ws.text, out);
    std::swap(ws.pieces, ws.pieces_tmp);
  }

 private:
  static thread_local std::vector<Piece> t_sub;
  bool add_prefix_space_;
  std::unique_ptr<SplitPre> split_;
};
thread_local std::vector<Piece> ByteLevelPre::t_sub;

class SequencePre final : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  void pre_tokenize(Workspace& ws) const override {
    for (const auto& p : parts_) p->pre_tokenize(ws);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

char32_t single_char(std::string_view s, std::string_view what) {
  std::size_t pos = 0;
  if (s.empty() || utf8::find_invalid(s)) {
    throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: {} must be one character", what));
  }
  const char32_t c = utf8::next(s, pos);
  if (pos != s.size()) {
    throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: {} must be one character", what));
  }
  return c;
}

}  // namespace

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() {
  return std::make_unique<BertPreTokenizer>();
}

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json::Value& v) {
  const std::string type = v.type_name("pre_tokenizer");
  if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
  if (type == "Whitespace") return std::make_unique<WhitespacePre>();
  if (type == "WhitespaceSplit") {
    return make_char_split([](char32_t c) { return uni::is_whitespace(c); }, Behavior::Removed);
  }
  if (type == "CharDelimiterSplit") {
    const char32_t d = single_char(v.get_string("delimiter"), "CharDelimiterSplit delimiter");
    return make_char_split([d](char32_t c) { return c == d; }, Behavior::Removed);
  }
  if (type == "Punctuation") {
    return make_char_split([](char32_t c) { return uni::is_bert_punct(c); },
                           parse_behavior(v.get_string_or("behavior", "Isolated")));
  }
  if (type == "Digits") {
    const bool individual = v.get_bool("individual_digits", false);
    return make_char_split([](char32_t c) { return uni::is_number(c); },
                           individual ? Behavior::Isolated : Behavior::Contiguous);
  }
  if (type == "Metaspace") {
    const char32_t rep = single_char(v.get_string_or("replacement", "\xE2\x96\x81"), "Metaspace replacement");
    Metaspace::Prepend prepend = Metaspace::Prepend::Always;
    if (auto scheme = v.find("prepend_scheme")) {
      const auto s = scheme->as_string("prepend_scheme");
      if (s == "always") {
        prepend = Metaspace::Prepend::Always;
      } else if (s == "first") {
        prepend = Metaspace::Prepend::First;
      } else if (s == "never") {
        prepend = Metaspace::Prepend::Never;
      } else {
        throw Error(ErrorKind::Unsupported,
                    fmt::format("tokenizer.json: unsupported Metaspace prepend_scheme '{}'", s));
      }
    } else if (!v.get_bool("add_prefix_space", true)) {
      prepend = Metaspace::Prepend::Never;
    }
    return std::make_unique<Metaspace>(rep, prepend, v.get_bool("split", true));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPre>(v.get_bool("add_prefix_space", true),
                                          v.get_bool("use_regex", true));
  }
  if (type == "Split") {
    return std::make_unique<SplitPre>(make_pattern(v.at("pattern"), "Split pre-tokenizer"),
                                      parse_behavior(v.get_string("behavior")), v.get_bool("invert", false));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (const auto& item : v.at("pretokenizers").items()) parts.push_back(make_pre_tokenizer(item));
    return std::make_unique<SequencePre>(std::move(parts));
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("tokenizer.json: unsupported pre_tokenizer type '{}'", type));
}

}  // namespace warden::tokenizer::detail

// WordPiece: greedy longest-match-first over the vocabulary, continuation pieces carry a
// prefix ("##"); a word that cannot be covered, or is longer than
// max_input_chars_per_word characters, becomes one unk token. The longest match is a
// single walk down a byte trie (one for word starts, one for continuations) instead of
// HF's repeated hash probes of shrinking substrings.

#include <fmt/format.h>

#include "core/error.hpp"
#include "tokenizer/components.hpp"

namespace warden::tokenizer::detail {

namespace {

class WordPiece final : public Model {
 public:
  WordPiece(std::vector<std::string> vocab, std::string unk, std::string prefix, std::size_t max_chars)
      : prefix_(std::move(prefix)), max_chars_(max_chars) {
    tokens_.assign(vocab);
    map_.reserve(vocab.size());
    std::vector<std::pair<std::string_view, std::uint32_t>> starts;
    std::vector<std::pair<std::string_view, std::uint32_t>> conts;
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      const std::string_view t = tokens_[i];
      const auto id = static_cast<std::uint32_t>(i);
      if (t.empty()) continue;  // a hole in a sparse vocabulary
      map_.insert(t, id);
      starts.emplace_back(t, id);
      if (!prefix_.empty() && t.size() > prefix_.size() && t.substr(0, prefix_.size()) == prefix_) {
        conts.emplace_back(t.substr(prefix_.size()), id);
      }
    }
    if (prefix_.empty()) conts = starts;
    start_trie_.build(starts);
    cont_trie_.build(conts);
    const auto u = map_.find(unk);
    if (!u) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("WordPiece: unk_token '{}' is not in the vocabulary", unk));
    }
    unk_id_ = *u;
  }

  void tokenize(const NormText& text, std::uint32_t begin, std::uint32_t end, std::vector<Token>& out,
                Workspace& /*ws*/) const override {
    const std::string_view s = text.bytes;
    // Character count, bounded: only "more than max_chars" matters.
    std::size_t chars = 0;
    for (std::uint32_t i = begin; i < end && chars <= max_chars_; ++i) {
      chars += (static_cast<unsigned char>(s[i]) & 0xC0U) != 0x80U ? 1 : 0;
    }
    if (chars > max_chars_) {
      out.push_back(Token{unk_id_, begin, end});
      return;
    }
    const std::size_t mark = out.size();
    std::uint32_t start = begin;
    while (start < end) {
      const ByteTrie& trie = start == begin ? start_trie_ : cont_trie_;
      std::uint32_t node = 0;
      std::uint32_t best_end = 0;
      std::uint32_t best_id = ByteTrie::kNoValue;
      for (std::uint32_t i = start; i < end; ++i) {
        node = trie.child(node, static_cast<unsigned char>(s[i]));
        if (node == 0) break;
        const std::uint32_t v = trie.value(node);
        if (v != ByteTrie::kNoValue) {
          best_id = v;
          best_end = i + 1;
        }
      }
      if (best_id == ByteTrie::kNoValue) {
        out.resize(mark);
        out.push_back(Token{unk_id_, begin, end});
        return;
      }
      out.push_back(Token{best_id, start, best_end});
      start = best_end;
    }
  }

  [[nodiscard]] std::optional<std::uint32_t> token_to_id(std::string_view token) const override {
    return map_.find(token);
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::uint32_t id) const override {
    if (id >= tokens_.size() || tokens_[id].empty()) return std::nullopt;
    return tokens_[id];
  }
  [[nodiscard]] std::size_t vocab_size() const override { return map_.size(); }
  [[nodiscard]] std::optional<std::uint32_t> unk_id() const override { return unk_id_; }

 private:
  StringTable tokens_;
  VocabMap map_;
  ByteTrie start_trie_, cont_trie_;
  std::string prefix_;
  std::size_t max_chars_;
  std::uint32_t unk_id_ = 0;
};

// WordLevel: the whole pre-tokenized word is one token, or unk.
class WordLevel final : public Model {
 public:
  WordLevel(std::vector<std::string> vocab, const std::string& unk) {
    tokens_.assign(vocab);
    map_.reserve(vocab.size());
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (!tokens_[i].empty()) map_.insert(tokens_[i], static_cast<std::uint32_t>(i));
    }
    unk_id_ = map_.find(unk);
  }
  void tokenize(const NormText& text, std::uint32_t begin, std::uint32_t end, std::vector<Token>& out,
                Workspace& /*ws*/) const override {
    const auto id = map_.find(std::string_view(text.bytes).substr(begin, end - begin));
    if (id) {
      out.push_back(Token{*id, begin, end});
    } else if (unk_id_) {
      out.push_back(Token{*unk_id_, begin, end});
    } else {
      throw Error(ErrorKind::InvalidInput,
                  "WordLevel: a word is not in the vocabulary and there is no unk_token");
    }
  }
  [[nodiscard]] std::optional<std::uint32_t> token_to_id(std::string_view token) const override {
    return map_.find(token);
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::uint32_t id) const override {
    if (id >= tokens_.size() || tokens_[id].empty()) return std::nullopt;
    return tokens_[id];
  }
  [[nodiscard]] std::size_t vocab_size() const override { return map_.size(); }
  [[nodiscard]] std::optional<std::uint32_t> unk_id() const override { return unk_id_; }

 private:
  StringTable tokens_;
  VocabMap map_;
  std::optional<std::uint32_t> unk_id_;
};

}  // namespace

std::unique_ptr<Model> make_wordlevel_model(const json::Value& v) {
  return std::make_unique<WordLevel>(vocab_from_object(v.at("vocab"), "WordLevel vocab"),
                                     v.get_string_or("unk_token", "<unk>"));
}

// {"token": id, ...} -> a dense id-indexed table (holes stay empty).
std::vector<std::string> vocab_from_object(const json::Value& vocab, std::string_view what) {
  std::vector<std::string> out;
  const auto members = vocab.members();
  out.resize(members.size());
  for (const auto& [key, value] : members) {
    const std::int64_t id = value.as_int(what);
    if (id < 0 || id > 0x7FFFFFFF) {
      throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: {} id {} out of range", what, id));
    }
    const auto idx = static_cast<std::size_t>(id);
    if (idx >= out.size()) out.resize(idx + 1);
    out[idx] = std::string(key);
  }
  return out;
}

std::unique_ptr<Model> make_wordpiece(std::vector<std::string> vocab, std::string unk, std::string prefix,
                                      std::size_t max_chars) {
  return std::make_unique<WordPiece>(std::move(vocab), std::move(unk), std::move(prefix), max_chars);
}

std::unique_ptr<Model> make_wordpiece_model(const json::Value& v) {
  const auto max_chars = v.get_optional_int("max_input_chars_per_word").value_or(100);
  return make_wordpiece(vocab_from_object(v.at("vocab"), "WordPiece vocab"),
                        v.get_string_or("unk_token", "[UNK]"),
                        v.get_string_or("continuing_subword_prefix", "##"),
                        static_cast<std::size_t>(std::max<std::int64_t>(0, max_chars)));
}

}  // namespace warden::tokenizer::detail

// Unigram (SentencePiece): Viterbi over the lattice of vocabulary pieces, exactly as HF's
// encode_optimized: pieces come from a byte-trie common-prefix walk, ties keep the first
// candidate, a character no piece covers becomes unk (score min - 10), consecutive unks are
// fused, and byte_fallback spells an unknown piece as <0xXX> tokens when they all exist.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "core/error.hpp"
#include "tokenizer/components.hpp"

namespace warden::tokenizer::detail {

namespace {

constexpr double kUnkPenalty = 10.0;
constexpr std::uint32_t kNone = 0xFFFFFFFFU;

class Unigram final : public Model {
 public:
  Unigram(std::vector<std::pair<std::string, double>> vocab, std::optional<std::uint32_t> unk_id,
          bool byte_fallback)
      : byte_fallback_(byte_fallback) {
    scores_.reserve(vocab.size());
    map_.reserve(vocab.size());
    std::vector<std::pair<std::string_view, std::uint32_t>> keys;
    for (const auto& [piece, score] : vocab) {
      pieces_.push_back(piece);
      scores_.push_back(score);
    }
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      const auto id = static_cast<std::uint32_t>(i);
      map_.insert(pieces_[i], id);  // a duplicated piece resolves to its last id, as in HF
      if (!pieces_[i].empty()) keys.emplace_back(pieces_[i], id);
    }
    trie_.build(keys);
    min_score_ = vocab.empty() ? 0.0 : *std::min_element(scores_.begin(), scores_.end());
    if (unk_id) {
      if (*unk_id >= pieces_.size())
        throw Error(ErrorKind::CorruptFile, "tokenizer.json: Unigram unk_id out of range");
      unk_id_ = *unk_id;
    }
    byte_ids_.fill(kNone);
    if (byte_fallback_) {
      for (unsigned b = 0; b < 256; ++b) {
        if (auto id = map_.find(fmt::format("<0x{:02X}>", b))) byte_ids_[b] = *id;
      }
    }
  }

  void tokenize(const NormText& text, std::uint32_t begin, std::uint32_t end, std::vector<Token>& out,
                Workspace& ws) const override {
    const std::string_view s = std::string_view(text.bytes).substr(begin, end - begin);
    const std::size_t n = s.size();
    if (n == 0) return;
    auto& score = ws.f64;
    auto& from = ws.u32a;
    auto& ids = ws.u32b;
    score.assign(n + 1, 0.0);
    from.assign(n + 1, kNone);
    ids.assign(n + 1, 0);
    const double unk_score = min_score_ - kUnkPenalty;
    for (std::size_t start = 0; start < n;) {
      const double here = score[start];
      const auto lead = static_cast<unsigned char>(s[start]);
      const std::size_t mblen = lead < 0x80 ? 1 : (lead < 0xE0 ? 2 : (lead < 0xF0 ? 3 : 4));
      bool has_single = false;
      std::uint32_t node = 0;
      for (std::size_t i = start; i < n; ++i) {
        node = trie_.child(node, static_cast<unsigned char>(s[i]));
        if (node == 0) break;
        const std::uint32_t id = trie_.value(node);
        if (id == ByteTrie::kNoValue) continue;
        const std::size_t key_end = i + 1;
        const double cand = here + scores_[id];
        if (from[key_end] == kNone || cand > score[key_end]) {
          score[key_end] = cand;
          from[key_end] = static_cast<std::uint32_t>(start);
          ids[key_end] = id;
        }
        if (key_end - start == mblen) has_single = true;
      }
      if (!has_single) {
        if (!unk_id_)
          throw Error(ErrorKind::InvalidInput,
                      "Unigram: text needs an unknown token but the model has no unk_id");
        const std::size_t key_end = start + mblen;
        const double cand = here + unk_score;
        if (from[key_end] == kNone || cand > score[key_end]) {
          score[key_end] = cand;
          from[key_end] = static_cast<std::uint32_t>(start);
          ids[key_end] = *unk_id_;
        }
      }
      start += mblen;
    }
    // Walk back, fusing consecutive unknown pieces, then emit left to right.
    const std::size_t mark = out.size();
    std::size_t at = n;
    std::size_t unk_end = kNone;
    while (at > 0) {
      const std::size_t st = from[at];
      const bool is_unk = unk_id_ && ids[at] == *unk_id_;
      if (is_unk) {
        if (unk_end == kNone) unk_end = at;
      } else {
        if (unk_end != kNone) {
          out.push_back(Token{kNone, static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(unk_end)});
          unk_end = kNone;
        }
        out.push_back(Token{ids[at], static_cast<std::uint32_t>(st), static_cast<std::uint32_t>(at)});
      }
      at = st;
    }
    if (unk_end != kNone) out.push_back(Token{kNone, 0, static_cast<std::uint32_t>(unk_end)});
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end());
    // HF looks every piece up by its string: unk runs and duplicated pieces resolve here.
    const std::size_t produced = out.size();
    for (std::size_t k = mark; k < produced; ++k) {
      Token& t = out[k];
      const std::string_view piece = s.substr(t.begin, t.end - t.begin);
      t.begin += begin;
      t.end += begin;
      if (auto id = map_.find(piece)) {
        t.id = *id;
        continue;
      }
      if (byte_fallback_ && std::all_of(piece.begin(), piece.end(), [&](char c) {
            return byte_ids_[static_cast<unsigned char>(c)] != kNone;
          })) {
        t.id = kByteMarker;  // expanded below
        continue;
      }
      t.id = *unk_id_;
    }
    if (!byte_fallback_) return;
    // Expand byte-fallback pieces in place (rare: only unknown text).
    bool any = false;
    for (std::size_t k = mark; k < out.size(); ++k) any = any || out[k].id == kByteMarker;
    if (!any) return;
    auto& tmp = t_tmp;
    tmp.assign(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end());
    out.resize(mark);
    for (const Token& t : tmp) {
      if (t.id != kByteMarker) {
        out.push_back(t);
        continue;
      }
      for (std::uint32_t i = t.begin; i < t.end; ++i) {
        out.push_back(Token{byte_ids_[static_cast<unsigned char>(text.bytes[i])], t.begin, t.end});
      }
    }
  }

  [[nodiscard]] std::optional<std::uint32_t> token_to_id(std::string_view token) const override {
    return map_.find(token);
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::uint32_t id) const override {
    if (id >= pieces_.size()) return std::nullopt;
    return pieces_[id];
  }
  [[nodiscard]] std::size_t vocab_size() const override { return pieces_.size(); }
  [[nodiscard]] std::string_view token_string(const Token& t, const NormText& text) const override {
    const std::string_view covered = std::string_view(text.bytes).substr(t.begin, t.end - t.begin);
    const std::string_view piece = pieces_[t.id];
    if (byte_fallback_ && piece.size() == 6 && piece.substr(0, 3) == "<0x" && piece != covered) return piece;
    return covered;  // HF reports the covered text (an unk run is its own text, not "<unk>")
  }

 private:
  static constexpr std::uint32_t kByteMarker = 0xFFFFFFFEU;
  static thread_local std::vector<Token> t_tmp;
  StringTable pieces_;
  std::vector<double> scores_;
  VocabMap map_;
  ByteTrie trie_;
  double min_score_ = 0.0;
  std::optional<std::uint32_t> unk_id_;
  bool byte_fallback_;
  std::array<std::uint32_t, 256> byte_ids_{};
};
thread_local std::vector<Token> Unigram::t_tmp;

}  // namespace

std::unique_ptr<Model> make_unigram_model(const json::Value& v) {
  std::vector<std::pair<std::string, double>> vocab;
  for (const auto& item : v.at("vocab").items()) {
    const auto pair = item.items();
    if (pair.size() != 2)
      throw Error(ErrorKind::CorruptFile, "tokenizer.json: Unigram vocab entries must be [piece, score]");
    vocab.emplace_back(std::string(pair[0].as_string("Unigram piece")), pair[1].as_double("Unigram score"));
  }
  std::optional<std::uint32_t> unk;
  if (auto u = v.get_optional_int("unk_id")) {
    if (*u < 0) throw Error(ErrorKind::CorruptFile, "tokenizer.json: Unigram unk_id out of range");
    unk = static_cast<std::uint32_t>(*u);
  }
  return std::make_unique<Unigram>(std::move(vocab), unk, v.get_bool("byte_fallback", false));
}

}  // namespace warden::tokenizer::detail

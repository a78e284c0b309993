// BPE: characters (with continuing_subword_prefix / end_of_word_suffix, byte_fallback and
// fused unk as in HF's merge_word), then merges applied lowest rank first, leftmost on ties,
// through a min-heap over a linked list of symbols: O(n log n) even for a 1 MB "word".
// Dropout is a training-time augmentation; inference runs with it off.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/components.hpp"

namespace warden::tokenizer::detail {

namespace {

struct MergeInfo {
  std::uint32_t rank;
  std::uint32_t new_id;
};

struct Symbol {
  std::uint32_t id;
  std::int32_t prev, next;
  std::uint32_t len;  // bytes; 0 once merged away
};

struct HeapItem {
  std::uint32_t rank;
  std::uint32_t pos;
  std::uint32_t new_id;
};
// std heap functions build a max-heap; "greater" means lower priority.
inline bool lower_priority(const HeapItem& a, const HeapItem& b) {
  if (a.rank != b.rank) return a.rank > b.rank;
  return a.pos > b.pos;
}

inline std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return (static_cast<std::uint64_t>(a) << 32) | b;
}

class Bpe final : public Model {
 public:
  Bpe(std::vector<std::string> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
      std::optional<std::string> unk, std::string prefix, std::string suffix, bool fuse_unk,
      bool byte_fallback, bool ignore_merges)
      : prefix_(std::move(prefix)),
        suffix_(std::move(suffix)),
        fuse_unk_(fuse_unk),
        byte_fallback_(byte_fallback),
        ignore_merges_(ignore_merges) {
    tokens_.assign(vocab);
    map_.reserve(vocab.size());
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (!tokens_[i].empty()) map_.insert(tokens_[i], static_cast<std::uint32_t>(i));
    }
    merges_.reserve(merges.size());
    for (std::size_t r = 0; r < merges.size(); ++r) {
      const auto& [a, b] = merges[r];
      const auto ia = map_.find(a);
      const auto ib = map_.find(b);
      if (!ia || !ib) {
        throw Error(
            ErrorKind::CorruptFile,
            fmt::format("tokenizer.json: BPE merge '{} {}' uses a token missing from the vocabulary", a, b));
      }
      const std::size_t cut = std::min(prefix_.size(), b.size());
      const std::string merged = a + b.substr(cut);
      const auto im = map_.find(merged);
      if (!im) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("tokenizer.json: BPE merge result '{}' is not in the vocabulary", merged));
      }
      merges_.emplace(pair_key(*ia, *ib), MergeInfo{static_cast<std::uint32_t>(r), *im});
    }
    if (unk) {
      const auto u = map_.find(*unk);
      if (!u)
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("tokenizer.json: BPE unk_token '{}' is not in the vocabulary", *unk));
      unk_id_ = *u;
    }
    byte_ids_.fill(kNone);
    for (unsigned b = 0; b < 256; ++b) {
      if (auto id = map_.find(fmt::format("<0x{:02X}>", b))) byte_ids_[b] = *id;
    }
    // The symbol of every single byte-level / ASCII character, to skip hashing on the hot path.
    ascii_ids_.fill(kNone);
    if (prefix_.empty() && suffix_.empty()) {
      for (unsigned c = 0; c < 128; ++c) {
        const char ch = static_cast<char>(c);
        if (auto id = map_.find(std::string_view(&ch, 1))) ascii_ids_[c] = *id;
      }
    }
  }

  void tokenize(const NormText& text, std::uint32_t begin, std::uint32_t end, std::vector<Token>& out,
                Workspace& ws) const override {
    const std::string_view w = std::string_view(text.bytes).substr(begin, end - begin);
    if (w.empty()) return;
    if (ignore_merges_) {
      if (auto id = map_.find(w)) {
        out.push_back(Token{*id, begin, end});
        return;
      }
    }
    auto& sym = t_symbols;
    sym.clear();
    std::string& s = ws.str;
    std::uint32_t unk_len = 0;
    bool have_unk = false;
    auto add = [&](std::uint32_t id, std::uint32_t len) {
      const auto idx = static_cast<std::int32_t>(sym.size());
      sym.push_back(Symbol{id, idx - 1, idx + 1, len});
    };
    for (std::size_t i = 0; i < w.size();) {
      const std::size_t start = i;
      const auto lead = static_cast<unsigned char>(w[i]);
      const std::size_t n = lead < 0x80 ? 1 : (lead < 0xE0 ? 2 : (lead < 0xF0 ? 3 : 4));
      i += n;
      const bool first = start == 0;
      const bool last = i >= w.size();
      std::optional<std::uint32_t> id;
      const bool fast = lead < 0x80 && prefix_.empty() && suffix_.empty();
      if (fast) {
        if (ascii_ids_[lead] != kNone) id = ascii_ids_[lead];
      } else {
        s.clear();
        if (!first) s += prefix_;
        s.append(w.substr(start, n));
        if (last) s += suffix_;
        id = map_.find(s);
      }
      if (id) {
        if (have_unk) {
          add(*unk_id_, unk_len);
          have_unk = false;
        }
        add(*id, static_cast<std::uint32_t>(n));
        continue;
      }
      if (fast) s.assign(w.substr(start, n));
      if (byte_fallback_) {
        // HF spells the decorated piece (prefix/suffix included) in bytes.
        const bool all = std::all_of(
            s.begin(), s.end(), [&](char c) { return byte_ids_[static_cast<unsigned char>(c)] != kNone; });
        if (all) {
          // HF adds these before flushing a pending unk; kept for identical output.
          for (const char c : s) add(byte_ids_[static_cast<unsigned char>(c)], 1);
          continue;
        }
      }
      if (unk_id_) {
        if (have_unk && fuse_unk_) {
          unk_len += static_cast<std::uint32_t>(n);
        } else {
          if (have_unk) add(*unk_id_, unk_len);
          have_unk = true;
          unk_len = static_cast<std::uint32_t>(n);
        }
      }
    }
    if (have_unk) add(*unk_id_, unk_len);
    if (sym.empty()) return;
    sym.back().next = -1;
    merge_all(sym);
    std::uint32_t off = begin;
    for (const auto& x : sym) {
      if (x.len == 0) continue;
      // Byte fallback over a decorated piece can claim more bytes than the word has (as in
      // HF); clamp so offsets stay inside the word.
      const std::uint32_t b = std::min(off, end);
      out.push_back(Token{x.id, b, std::min(off + x.len, end)});
      off += x.len;
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
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;

  [[nodiscard]] const MergeInfo* find_merge(std::uint32_t a, std::uint32_t b) const {
    const auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

  void merge_all(std::vector<Symbol>& sym) const {
    auto& heap = t_heap;
    heap.clear();
    for (std::size_t i = 0; i + 1 < sym.size(); ++i) {
      if (const MergeInfo* m = find_merge(sym[i].id, sym[i + 1].id)) {
        heap.push_back(HeapItem{m->rank, static_cast<std::uint32_t>(i), m->new_id});
      }
    }
    std::make_heap(heap.begin(), heap.end(), lower_priority);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), lower_priority);
      const HeapItem top = heap.back();
      heap.pop_back();
      Symbol& cur = sym[top.pos];
      if (cur.len == 0 || cur.next == -1) continue;
      const auto next_pos = static_cast<std::size_t>(cur.next);
      const Symbol right = sym[next_pos];
      const MergeInfo* m = find_merge(cur.id, right.id);
      if (m == nullptr || m->new_id != top.new_id) continue;  // an expired entry
      cur.id = top.new_id;
      cur.len += right.len;
      cur.next = right.next;
      sym[next_pos].len = 0;
      if (right.next >= 0)
        sym[static_cast<std::size_t>(right.next)].prev = static_cast<std::int32_t>(top.pos);
      if (cur.prev >= 0) {
        const Symbol& prev = sym[static_cast<std::size_t>(cur.prev)];
        if (const MergeInfo* pm = find_merge(prev.id, cur.id)) {
          heap.push_back(HeapItem{pm->rank, static_cast<std::uint32_t>(cur.prev), pm->new_id});
          std::push_heap(heap.begin(), heap.end(), lower_priority);
        }
      }
      if (cur.next >= 0) {
        const Symbol& nx = sym[static_cast<std::size_t>(cur.next)];
        if (const MergeInfo* nm = find_merge(cur.id, nx.id)) {
          heap.push_back(HeapItem{nm->rank, top.pos, nm->new_id});
          std::push_heap(heap.begin(), heap.end(), lower_priority);
        }
      }
    }
  }

  StringTable tokens_;
  VocabMap map_;
  std::unordered_map<std::uint64_t, MergeInfo> merges_;
  std::optional<std::uint32_t> unk_id_;
  std::string prefix_, suffix_;
  bool fuse_unk_, byte_fallback_, ignore_merges_;
  std::array<std::uint32_t, 256> byte_ids_{};
  std::array<std::uint32_t, 128> ascii_ids_{};
  static thread_local std::vector<Symbol> t_symbols;
  static thread_local std::vector<HeapItem> t_heap;
};
thread_local std::vector<Symbol> Bpe::t_symbols;
thread_local std::vector<HeapItem> Bpe::t_heap;

}  // namespace

std::unique_ptr<Model> make_bpe_model(const json::Value& v) {
  std::vector<std::pair<std::string, std::string>> merges;
  if (auto m = v.find("merges")) {
    for (const auto& item : m->items()) {
      if (item.is_string()) {
        const std::string_view s = item.as_string("BPE merge");
        const std::size_t sp = s.find(' ');
        if (sp == std::string_view::npos) {
          throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: BPE merge '{}' is not 'a b'", s));
        }
        merges.emplace_back(std::string(s.substr(0, sp)), std::string(s.substr(sp + 1)));
      } else {
        const auto parts = item.items();
        if (parts.size() != 2)
          throw Error(ErrorKind::CorruptFile, "tokenizer.json: BPE merge must be a pair");
        merges.emplace_back(std::string(parts[0].as_string("BPE merge")),
                            std::string(parts[1].as_string("BPE merge")));
      }
    }
  }
  std::optional<std::string> unk;
  if (auto u = v.find("unk_token")) unk = std::string(u->as_string("unk_token"));
  return std::make_unique<Bpe>(vocab_from_object(v.at("vocab"), "BPE vocab"), merges, unk,
                               v.get_string_or("continuing_subword_prefix", ""),
                               v.get_string_or("end_of_word_suffix", ""), v.get_bool("fuse_unk", false),
                               v.get_bool("byte_fallback", false), v.get_bool("ignore_merges", false));
}

}  // namespace warden::tokenizer::detail

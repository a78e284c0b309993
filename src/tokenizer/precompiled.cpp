// The Precompiled normalizer: SentencePiece's compiled character map, as XLM-R / bge-m3
// tokenizer.json files carry it (base64 of: u32 LE trie size in bytes, a darts-clone
// double-array trie of that size, then NUL-terminated replacement strings).
//
// Replacement follows HF's spm_precompiled exactly, odd parts included: each extended
// grapheme shorter than 6 bytes is looked up whole, and the *shortest* key that prefixes it
// replaces the whole grapheme; otherwise each character is looked up alone. Alignments
// follow HF's NormalizedString::transform with the change counts HF computes.

#include <fmt/format.h>
#include <utf8proc.h>

#include <array>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/components.hpp"

namespace warden::tokenizer::detail {

namespace {

std::string base64_decode(std::string_view in) {
  static constexpr std::array<int, 256> table = [] {
    std::array<int, 256> t{};
    for (auto& v : t) v = -1;
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
    return t;
  }();
  std::string out;
  out.reserve(in.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char ch : in) {
    if (ch == '=') break;
    if (ch == '\n' || ch == '\r') continue;
    const int v = table[static_cast<unsigned char>(ch)];
    if (v < 0)
      throw Error(ErrorKind::CorruptFile, "tokenizer.json: Precompiled charsmap is not valid base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFU));
    }
  }
  return out;
}

// HF's NormalizedString::transform: (char, change) pairs against the old text, where change
// 1 inserts, 0 replaces one old character and -n also removes n more.
void hf_transform(const NormText& in, const std::vector<std::pair<char32_t, int>>& tr, NormText& out) {
  out.clear();
  std::size_t idx = 0;
  for (const auto& [c, change] : tr) {
    Align a{};
    if (change > 0) {
      if (idx >= 1 && idx - 1 < in.size()) a = in.align[idx - 1];
    } else {
      if (idx < in.size()) a = in.align[idx];
      std::size_t consume = 1 + static_cast<std::size_t>(-change);
      for (; consume > 0 && idx < in.size(); --consume) utf8::next(in.bytes, idx);
    }
    out.push(c, a);
  }
}

class Precompiled final : public Normalizer {
 public:
  explicit Precompiled(std::string_view b64) {
    const std::string raw = base64_decode(b64);
    if (raw.size() < 4)
      throw Error(ErrorKind::CorruptFile, "tokenizer.json: Precompiled charsmap is truncated");
    const std::uint32_t trie_size = static_cast<std::uint32_t>(static_cast<unsigned char>(raw[0])) |
                                    (static_cast<std::uint32_t>(static_cast<unsigned char>(raw[1])) << 8) |
                                    (static_cast<std::uint32_t>(static_cast<unsigned char>(raw[2])) << 16) |
                                    (static_cast<std::uint32_t>(static_cast<unsigned char>(raw[3])) << 24);
    if (trie_size % 4 != 0 || trie_size > raw.size() - 4) {
      throw Error(ErrorKind::CorruptFile,
                  "tokenizer.json: Precompiled charsmap has an inconsistent trie size");
    }
    units_.resize(trie_size / 4);
    for (std::size_t i = 0; i < units_.size(); ++i) {
      const std::size_t o = 4 + i * 4;
      units_[i] = static_cast<std::uint32_t>(static_cast<unsigned char>(raw[o])) |
                  (static_cast<std::uint32_t>(static_cast<unsigned char>(raw[o + 1])) << 8) |
                  (static_cast<std::uint32_t>(static_cast<unsigned char>(raw[o + 2])) << 16) |
                  (static_cast<std::uint32_t>(static_cast<unsigned char>(raw[o + 3])) << 24);
    }
    blob_ = raw.substr(4 + trie_size);
    utf8::require_valid(blob_, "tokenizer.json Precompiled replacement strings");
    for (unsigned b = 1; b < 128; ++b) {
      const char ch = static_cast<char>(b);
      ascii_may_match_[b] = first_step(static_cast<unsigned char>(ch));
    }
  }

  void normalize(NormText& text, Workspace& ws) const override {
    if (units_.empty()) return;
    bool may_change = false;
    for (const char ch : text.bytes) {
      const auto b = static_cast<unsigned char>(ch);
      if (b >= 0x80 || ascii_may_match_[b] || b == '\r') {
        may_change = true;
        break;
      }
    }
    if (!may_change) return;
    auto& tr = t_tr;
    tr.clear();
    const std::string& s = text.bytes;
    std::size_t pos = 0;
    utf8proc_int32_t state = 0;
    while (pos < s.size()) {
      // One extended grapheme cluster [g0, g1).
      const std::size_t g0 = pos;
      std::size_t p = pos;
      char32_t prev = utf8::next(s, p);
      std::size_t g1 = p;
      state = 0;
      while (g1 < s.size()) {
        std::size_t q = g1;
        const char32_t c = utf8::next(s, q);
        if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                             static_cast<utf8proc_int32_t>(c), &state))
          break;
        prev = c;
        g1 = q;
      }
      const std::string_view g(s.data() + g0, g1 - g0);
      pos = g1;
      if (g.size() < 6) {
        if (const auto norm = transform(g)) {
          replace(tr, g, *norm);
          continue;
        }
      }
      for (std::size_t k = 0; k < g.size();) {
        const std::size_t c0 = k;
        const char32_t c = utf8::next(g, k);
        const std::string_view part = g.substr(c0, k - c0);
        if (const auto norm = transform(part)) {
          replace(tr, part, *norm);
        } else {
          tr.emplace_back(c, 0);
        }
      }
    }
    hf_transform(text, tr, ws.scratch);
    std::swap(text, ws.scratch);
  }

 private:
  static void replace(std::vector<std::pair<char32_t, int>>& tr, std::string_view old_part,
                      std::string_view new_part) {
    int old_count = 0;
    for (const char ch : old_part) old_count += (static_cast<unsigned char>(ch) & 0xC0U) != 0x80U ? 1 : 0;
    int new_count = 0;
    for (std::size_t k = 0; k < new_part.size();) {
      tr.emplace_back(utf8::next(new_part, k), 0);
      ++new_count;
    }
    const int diff = new_count - old_count;
    if (diff > 0) {
      for (int k = 0; k < diff; ++k) tr[tr.size() - 1 - static_cast<std::size_t>(k)].second = 1;
    } else if (diff < 0 && !tr.empty()) {
      tr.back().second += diff;
    }
  }

  [[nodiscard]] std::uint32_t unit(std::size_t i) const { return i < units_.size() ? units_[i] : 0U; }
  static std::uint32_t offset(std::uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }
  static std::uint32_t label(std::uint32_t u) { return u & ((1U << 31) | 0xFFU); }
  static bool has_leaf(std::uint32_t u) { return ((u >> 8) & 1U) == 1U; }
  static std::uint32_t value(std::uint32_t u) { return u & ((1U << 31) - 1); }

  [[nodiscard]] bool first_step(unsigned char c) const {
    std::size_t node = offset(unit(0));
    node ^= c;
    return label(unit(node)) == c;
  }

  // The replacement for the shortest key that prefixes `key`, if any. Out-of-range trie
  // positions (a hostile file) simply do not match.
  [[nodiscard]] std::optional<std::string_view> transform(std::string_view key) const {
    std::size_t node = offset(unit(0));
    for (const char ch : key) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == 0) break;
      node ^= c;
      const std::uint32_t u = unit(node);
      if (label(u) != c) return std::nullopt;
      node ^= offset(u);
      if (has_leaf(u)) {
        const std::uint32_t v = value(unit(node));
        if (v >= blob_.size()) return std::nullopt;
        const std::size_t e = blob_.find('\0', v);
        return std::string_view(blob_).substr(v, (e == std::string::npos ? blob_.size() : e) - v);
      }
    }
    return std::nullopt;
  }

  std::vector<std::uint32_t> units_;
  std::string blob_;
  std::array<bool, 128> ascii_may_match_{};
  static thread_local std::vector<std::pair<char32_t, int>> t_tr;
};
thread_local std::vector<std::pair<char32_t, int>> Precompiled::t_tr;

}  // namespace

std::unique_ptr<Normalizer> make_precompiled(const json::Value& v) {
  // A null charsmap is an error in HF too (its deserializer wants a string).
  return std::make_unique<Precompiled>(v.at("precompiled_charsmap").as_string("precompiled_charsmap"));
}

}  // namespace warden::tokenizer::detail

#pragma once
// Vocabulary containers built once at load time and read without allocation afterwards:
// all strings live in one arena, looked up through an open-addressing hash table of
// string_views (VocabMap) or walked byte by byte through a CSR trie (ByteTrie).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fnv1a.hpp"

namespace warden::tokenizer::detail {

inline std::uint64_t hash_bytes(std::string_view s) noexcept {
  // FNV-1a with a final avalanche: vocab keys are short, and this is cheap and stable.
  std::uint64_t h = fnv1a(s);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  return h;
}

// token string -> id. Later insertions of the same string overwrite earlier ones, which
// is what HF's HashMap-based vocabularies do with duplicated pieces.
class VocabMap {
 public:
  void reserve(std::size_t n);
  void insert(std::string_view key, std::uint32_t value);
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view key) const noexcept {
    if (slots_.empty()) return std::nullopt;
    const std::uint64_t mask = slots_.size() - 1;
    for (std::uint64_t i = hash_bytes(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.len == kEmpty) return std::nullopt;
      if (s.len == key.size() && std::string_view(arena_.data() + s.off, s.len) == key) return s.value;
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFU;
  struct Slot {
    std::uint32_t off = 0;
    std::uint32_t len = kEmpty;
    std::uint32_t value = 0;
  };
  void grow();
  std::string arena_;
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

// Byte trie over a set of keys with values, for longest-match and common-prefix walks.
class ByteTrie {
 public:
  static constexpr std::uint32_t kNoValue = 0xFFFFFFFFU;
  void build(const std::vector<std::pair<std::string_view, std::uint32_t>>& keys);
  // Node 0 is the root. Returns the child or 0 when there is none.
  [[nodiscard]] std::uint32_t child(std::uint32_t node, unsigned char b) const noexcept {
    if (node == 0) return root_[b];
    const std::uint32_t lo = first_[node];
    const std::uint32_t hi = first_[node + 1];
    for (std::uint32_t i = lo; i < hi; ++i) {
      if (labels_[i] == b) return targets_[i];
    }
    return 0;
  }
  [[nodiscard]] std::uint32_t value(std::uint32_t node) const noexcept { return values_[node]; }
  [[nodiscard]] bool empty() const noexcept { return values_.size() <= 1; }

 private:
  std::uint32_t root_[256] = {};
  std::vector<std::uint32_t> first_;  // CSR: children of node n are [first_[n], first_[n+1])
  std::vector<unsigned char> labels_;
  std::vector<std::uint32_t> targets_;
  std::vector<std::uint32_t> values_;
};

// An id -> string table in one arena.
class StringTable {
 public:
  void assign(const std::vector<std::string>& strings);
  void push_back(std::string_view s);
  [[nodiscard]] std::string_view operator[](std::size_t i) const noexcept {
    return {arena_.data() + offs_[i], offs_[i + 1] - offs_[i]};
  }
  [[nodiscard]] std::size_t size() const noexcept { return offs_.empty() ? 0 : offs_.size() - 1; }

 private:
  std::string arena_;
  std::vector<std::uint32_t> offs_;
};

}  // namespace warden::tokenizer::detail

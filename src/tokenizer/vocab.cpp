#include "tokenizer/vocab.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace warden::tokenizer::detail {

void VocabMap::reserve(std::size_t n) {
  std::size_t cap = 16;
  while (cap < n * 2) cap *= 2;
  if (cap <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(cap, Slot{});
  const std::uint64_t mask = cap - 1;
  for (const Slot& s : old) {
    if (s.len == kEmpty) continue;
    std::uint64_t i = hash_bytes(std::string_view(arena_.data() + s.off, s.len)) & mask;
    while (slots_[i].len != kEmpty) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void VocabMap::grow() {
  reserve(std::max<std::size_t>(16, count_ + 1) * 2);
}

void VocabMap::insert(std::string_view key, std::uint32_t value) {
  if (key.size() >= kEmpty || arena_.size() + key.size() >= 0xFFFFFFFFULL) {
    throw Error(ErrorKind::CorruptFile, "vocabulary too large");
  }
  if ((count_ + 1) * 2 > slots_.size()) grow();
  const std::uint64_t mask = slots_.size() - 1;
  for (std::uint64_t i = hash_bytes(key) & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.len == kEmpty) {
      s.off = static_cast<std::uint32_t>(arena_.size());
      s.len = static_cast<std::uint32_t>(key.size());
      s.value = value;
      arena_.append(key);
      ++count_;
      return;
    }
    if (s.len == key.size() && std::string_view(arena_.data() + s.off, s.len) == key) {
      s.value = value;
      return;
    }
  }
}

void ByteTrie::build(const std::vector<std::pair<std::string_view, std::uint32_t>>& keys) {
  struct Node {
    std::vector<std::pair<unsigned char, std::uint32_t>> kids;
    std::uint32_t value = kNoValue;
  };
  std::vector<Node> nodes(1);
  for (const auto& [key, value] : keys) {
    std::uint32_t n = 0;
    for (const char ch : key) {
      const auto b = static_cast<unsigned char>(ch);
      std::uint32_t next = 0;
      for (const auto& [label, target] : nodes[n].kids) {
        if (label == b) {
          next = target;
          break;
        }
      }
      if (next == 0) {
        next = static_cast<std::uint32_t>(nodes.size());
        nodes[n].kids.emplace_back(b, next);
        nodes.emplace_back();
      }
      n = next;
    }
    nodes[n].value = value;  // a later duplicate wins, as in HF's HashMap
  }
  std::fill(std::begin(root_), std::end(root_), 0U);
  for (const auto& [label, target] : nodes[0].kids) root_[label] = target;
  first_.assign(nodes.size() + 1, 0);
  values_.resize(nodes.size());
  labels_.clear();
  targets_.clear();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    first_[n] = static_cast<std::uint32_t>(labels_.size());
    values_[n] = nodes[n].value;
    if (n == 0) continue;
    for (const auto& [label, target] : nodes[n].kids) {
      labels_.push_back(label);
      targets_.push_back(target);
    }
  }
  first_[nodes.size()] = static_cast<std::uint32_t>(labels_.size());
}

void StringTable::assign(const std::vector<std::string>& strings) {
  arena_.clear();
  offs_.assign(1, 0);
  for (const auto& s : strings) push_back(s);
}

void StringTable::push_back(std::string_view s) {
  if (offs_.empty()) offs_.push_back(0);
  arena_.append(s);
  offs_.push_back(static_cast<std::uint32_t>(arena_.size()));
}

}  // namespace warden::tokenizer::detail

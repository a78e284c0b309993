#pragma once
// A batch of tokenized sequences packed one after another, the engine's input: no
// padding, so every dense layer runs on exactly the real tokens.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace warden::model::engine {

struct TokenBatch {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> type_ids;  // same length as ids
  std::vector<std::size_t> offsets{0};  // sequence s is [offsets[s], offsets[s + 1])
  // Per sequence, how many leading tokens the attention lets every token see (0: all of them):
  // ColBERT's query-expansion tokens attend but are not attended to. Empty while none is limited.
  std::vector<std::size_t> visible_keys;
  // Per sequence, the task adapter its weights take (model/engine/lora.hpp; kNoAdapter: the base
  // weights). Empty while no sequence has one.
  static constexpr std::int32_t kNoAdapter = -1;
  std::vector<std::int32_t> adapters;

  // type_ids may be empty (all zero). visible_keys, adapter: see above.
  void add(std::span<const std::uint32_t> seq_ids, std::span<const std::uint32_t> seq_type_ids = {},
           std::size_t seq_visible_keys = 0, std::int32_t adapter = kNoAdapter);
  // The adapter of sequence s.
  [[nodiscard]] std::int32_t adapter(std::size_t s) const noexcept {
    return adapters.empty() ? kNoAdapter : adapters[s];
  }
  void clear();
  [[nodiscard]] std::size_t sequences() const noexcept { return offsets.size() - 1; }
  [[nodiscard]] std::size_t tokens() const noexcept { return ids.size(); }
  [[nodiscard]] std::size_t length(std::size_t s) const noexcept { return offsets[s + 1] - offsets[s]; }
};

}  // namespace warden::model::engine

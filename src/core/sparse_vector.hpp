#pragma once
// A sparse vector over a model's vocabulary (a lexical embedding: bge-m3's token weights,
// SPLADE's expansion): the ids that carry weight, in ascending order, and their weights.
// Every layer that hands one on (the model's heads, the routes, bulk jobs) uses this type.

#include <cstdint>
#include <vector>

namespace warden {

struct SparseVector {
  std::vector<std::uint32_t> indices;  // ascending, unique
  std::vector<float> values;           // same length; every value > 0

  [[nodiscard]] std::size_t size() const noexcept { return indices.size(); }
  friend bool operator==(const SparseVector&, const SparseVector&) = default;
};

}  // namespace warden

#include "embed/length_order.hpp"

#include <algorithm>
#include <numeric>

namespace warden::embed {

std::vector<std::size_t> length_order(std::span<const PreparedInput> inputs) {
  std::vector<std::size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return inputs[a].tokens < inputs[b].tokens; });
  return order;
}

}  // namespace warden::embed

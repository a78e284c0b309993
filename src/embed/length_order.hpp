#pragma once
// The order in which prepared inputs are batched when many are run at once (a bulk job, the
// Python package's embed): by token count, so that a batch, which pads to its longest input,
// holds inputs of similar length. Stable: equal lengths keep their input order.

#include <cstddef>
#include <span>
#include <vector>

#include "embed/embedder.hpp"

namespace warden::embed {

// The indices of `inputs`, shortest first.
[[nodiscard]] std::vector<std::size_t> length_order(std::span<const PreparedInput> inputs);

}  // namespace warden::embed

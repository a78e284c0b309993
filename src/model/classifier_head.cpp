#include "model/classifier_head.hpp"

#include <algorithm>
#include <vector>

namespace warden::model {

void ClassifierHead::logits(std::span<const float> hidden, std::size_t dim,
                            std::span<const std::size_t> offsets, std::span<float> out_logits,
                            ThreadPool* pool) const {
  const std::size_t sequences = offsets.size() - 1;
  // The first token of each sequence, gathered into a contiguous block.
  std::vector<float> first(sequences * dim);
  for (std::size_t s = 0; s < sequences; ++s) {
    std::copy_n(hidden.data() + offsets[s] * dim, dim, first.data() + s * dim);
  }
  std::vector<float> mid(sequences * dense.n());
  kernels::linear(first.data(), dim, sequences, dense, mid.data(), dense.n(), {activation}, pool);
  kernels::linear(mid.data(), dense.n(), sequences, out, out_logits.data(), out.n(), {}, pool);
}

}  // namespace warden::model

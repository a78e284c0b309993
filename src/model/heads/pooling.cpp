#include "model/heads/pooling.hpp"

#include <algorithm>
#include <cmath>

namespace warden::model::heads {

void pool(std::span<const float> hidden, std::size_t dim, std::span<const std::size_t> offsets,
          metadata::PoolingMode mode, std::span<float> out, std::span<const std::size_t> skip_front) {
  const std::size_t sequences = offsets.size() - 1;
  for (std::size_t s = 0; s < sequences; ++s) {
    float* o = out.data() + s * dim;
    const std::size_t first = offsets[s];
    const std::size_t end = offsets[s + 1];
    switch (mode) {
      case metadata::PoolingMode::Cls:
        std::copy_n(hidden.data() + first * dim, dim, o);
        break;
      case metadata::PoolingMode::LastToken:
        std::copy_n(hidden.data() + (end - 1) * dim, dim, o);
        break;
      case metadata::PoolingMode::Mean:
      case metadata::PoolingMode::Max: {
        std::size_t begin = first + (skip_front.empty() ? 0 : skip_front[s]);
        if (begin >= end) begin = first;  // nothing left after the prompt: pool it all
        if (mode == metadata::PoolingMode::Mean) {
          std::fill_n(o, dim, 0.0F);
          for (std::size_t t = begin; t < end; ++t) {
            const float* row = hidden.data() + t * dim;
            for (std::size_t j = 0; j < dim; ++j) o[j] += row[j];
          }
          const float inv = 1.0F / static_cast<float>(end - begin);
          for (std::size_t j = 0; j < dim; ++j) o[j] *= inv;
        } else {
          std::copy_n(hidden.data() + begin * dim, dim, o);
          for (std::size_t t = begin + 1; t < end; ++t) {
            const float* row = hidden.data() + t * dim;
            for (std::size_t j = 0; j < dim; ++j) o[j] = std::max(o[j], row[j]);
          }
        }
        break;
      }
    }
  }
}

void truncate_rows(std::span<float> rows, std::size_t dim, std::size_t keep) {
  const std::size_t n = dim == 0 ? 0 : rows.size() / dim;
  // Row r moves from r*dim to r*keep <= r*dim: copying forward never overwrites a row
  // before it was moved.
  for (std::size_t r = 1; r < n; ++r) std::copy_n(rows.data() + r * dim, keep, rows.data() + r * keep);
}

}  // namespace warden::model::heads

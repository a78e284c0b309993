#include "core/l2_normalize.hpp"

#include <algorithm>
#include <cmath>

namespace warden {

void l2_normalize(std::span<float> rows, std::size_t dim) {
  for (std::size_t r = 0; r + dim <= rows.size(); r += dim) {
    double sq = 0.0;
    for (std::size_t j = 0; j < dim; ++j)
      sq += static_cast<double>(rows[r + j]) * static_cast<double>(rows[r + j]);
    const float inv = 1.0F / std::max(static_cast<float>(std::sqrt(sq)), 1e-12F);
    for (std::size_t j = 0; j < dim; ++j) rows[r + j] *= inv;
  }
}

}  // namespace warden

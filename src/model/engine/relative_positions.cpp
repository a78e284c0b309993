#include "model/engine/relative_positions.hpp"

#include <algorithm>
#include <cmath>

namespace warden::model::engine {

std::int64_t relative_bucket(std::int64_t r, std::int64_t bucket_size, std::int64_t max_position) {
  if (bucket_size <= 0 || max_position <= 0) return r;
  const std::int64_t mid = bucket_size / 2;
  // Upstream replaces |r| < mid by mid - 1 before the logarithm, then keeps r wherever that
  // value is <= mid: only |r| > mid is bucketed.
  const std::int64_t abs_pos = (r < mid && r > -mid) ? mid - 1 : (r < 0 ? -r : r);
  if (abs_pos <= mid) return r;
  // abs_pos / mid: a float32 tensor divided in float32; (max_position - 1) / mid: a Python
  // float (double) made a float32 tensor.
  const float numerator = std::log(static_cast<float>(abs_pos) / static_cast<float>(mid));
  const float denominator =
      std::log(static_cast<float>(static_cast<double>(max_position - 1) / static_cast<double>(mid)));
  const float log_pos =
      std::ceil(numerator / denominator * static_cast<float>(mid - 1)) + static_cast<float>(mid);
  const auto bucket = static_cast<std::int64_t>(log_pos);
  return r < 0 ? -bucket : bucket;
}

std::vector<std::int32_t> relative_rows(std::size_t max_distance, std::int64_t span, std::int64_t bucket_size,
                                        std::int64_t max_position) {
  const auto d = static_cast<std::int64_t>(max_distance);
  std::vector<std::int32_t> rows(2 * max_distance + 1);
  for (std::int64_t r = -d; r <= d; ++r) {
    const std::int64_t row =
        std::clamp<std::int64_t>(relative_bucket(r, bucket_size, max_position) + span, 0, 2 * span - 1);
    rows[static_cast<std::size_t>(r + d)] = static_cast<std::int32_t>(row);
  }
  return rows;
}

std::int64_t mpnet_relative_bucket(std::int64_t relative_position) {
  constexpr std::int64_t kHalf = 16;  // num_buckets // 2
  constexpr std::int64_t kExact = 8;  // max_exact
  constexpr double kMaxDistance = 128.0;
  const std::int64_t n = -relative_position;
  const std::int64_t base = n < 0 ? kHalf : 0;
  const std::int64_t a = n < 0 ? -n : n;
  if (a < kExact) return base + a;
  // torch: (n.float() / max_exact), log, divided by the float32 of math.log(16), times 8, each
  // rounded to float32, then truncated.
  const float scaled = static_cast<float>(a) / static_cast<float>(kExact);
  const float ratio =
      std::log(scaled) / static_cast<float>(std::log(kMaxDistance / static_cast<double>(kExact)));
  const auto large = kExact + static_cast<std::int64_t>(ratio * static_cast<float>(kHalf - kExact));
  return base + std::min(large, kHalf - 1);
}

}  // namespace warden::model::engine

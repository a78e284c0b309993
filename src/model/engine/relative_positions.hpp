#pragma once
// Bucketed relative positions, with HF transformers' arithmetic. DeBERTa-v2: the bucket of a
// distance r = i - j (query i, key j) and the row of the relative embedding table it reads
// (`make_log_bucket_position`, `build_relative_position` and the clamp of
// `disentangled_attention_bias` in models/deberta_v2/modeling_deberta_v2.py). MPNet: the
// T5-style bucket of its relative attention bias (models/mpnet/modeling_mpnet.py).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace warden::model::engine {

// r itself when |r| <= mid = bucket_size / 2 (or when bucket_size or max_position is not
// positive: no bucketing), else sign(r) · (ceil(ln(|r| / mid) / ln((max_position - 1) / mid)
// · (mid - 1)) + mid), each step in float32 as torch computes it: the two logarithms of the
// same value are equal, so |r| = max_position - 1 lands on mid + mid - 1, not one past it.
std::int64_t relative_bucket(std::int64_t r, std::int64_t bucket_size, std::int64_t max_position);

// rows[r + max_distance] for r in [-max_distance, max_distance]: the row of the relative
// table ([2·span x hidden]) that distance r reads, clamp(bucket(r) + span, 0, 2·span - 1).
std::vector<std::int32_t> relative_rows(std::size_t max_distance, std::int64_t span, std::int64_t bucket_size,
                                        std::int64_t max_position);

// MPNet's bucket of a relative position j - i (key j, query i): HF modeling_mpnet's
// relative_position_bucket (T5's bidirectional scheme, fixed at 32 buckets and max_distance
// 128): with n = i - j, 16 · [n < 0] plus |n| when |n| < 8, else
// min(8 + trunc(ln(|n| / 8) / ln(16) · 8), 15), in float32 as torch computes it.
std::int64_t mpnet_relative_bucket(std::int64_t relative_position);

}  // namespace warden::model::engine

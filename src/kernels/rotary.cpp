#include "kernels/rotary.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace warden::kernels {

std::vector<float> rotary_inv_freq(double base, std::size_t dims) {
  std::vector<float> inv(dims / 2);
  const auto b = static_cast<float>(base);
  const auto d = static_cast<float>(dims);
  for (std::size_t i = 0; i < inv.size(); ++i) {
    inv[i] = 1.0F / std::pow(b, static_cast<float>(2 * i) / d);
  }
  return inv;
}

RotaryTable RotaryTable::make(std::span<const float> inv_freq, std::size_t positions) {
  RotaryTable t;
  t.half_ = inv_freq.size();
  t.positions_ = positions;
  t.cos_.resize(positions * t.half_);
  t.sin_.resize(positions * t.half_);
  for (std::size_t p = 0; p < positions; ++p) {
    for (std::size_t i = 0; i < t.half_; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[i];  // float32, as torch.outer
      t.cos_[p * t.half_ + i] = std::cos(angle);
      t.sin_[p * t.half_ + i] = std::sin(angle);
    }
  }
  return t;
}

namespace {

// One head's first 2·half values at x, rotated by (c, s).
void rotate(float* x, const float* c, const float* s, std::size_t half, bool interleaved) {
  if (interleaved) {
    for (std::size_t i = 0; i < half; ++i) {
      const float a = x[2 * i];
      const float b = x[2 * i + 1];
      x[2 * i] = a * c[i] - b * s[i];
      x[2 * i + 1] = b * c[i] + a * s[i];
    }
    return;
  }
  float* lo = x;
  float* hi = x + half;
  for (std::size_t i = 0; i < half; ++i) {
    const float a = lo[i];
    const float b = hi[i];
    lo[i] = a * c[i] - b * s[i];
    hi[i] = b * c[i] + a * s[i];
  }
}

}  // namespace

void apply_rotary(float* qkv, std::size_t ld, std::span<const std::size_t> seq_offsets,
                  std::size_t rotated_heads, std::size_t head_dim, std::span<const RotaryTable* const> tables,
                  bool interleaved, ThreadPool* pool) {
  if (seq_offsets.size() < 2) return;
  const std::size_t sequences = seq_offsets.size() - 1;
  if (tables.size() != sequences) throw Error(ErrorKind::Internal, "apply_rotary: one table per sequence");
  const std::size_t tokens = seq_offsets.back();
  // Which sequence each token is in, found per task by a walk from its first token.
  const std::size_t chunk = 64;
  parallel_for(pool, (tokens + chunk - 1) / chunk, [&](std::size_t task) {
    const std::size_t first = task * chunk;
    const std::size_t last = std::min(tokens, first + chunk);
    std::size_t s = 0;
    while (seq_offsets[s + 1] <= first) ++s;
    for (std::size_t t = first; t < last; ++t) {
      while (seq_offsets[s + 1] <= t) ++s;
      const RotaryTable& table = *tables[s];
      const std::size_t p = t - seq_offsets[s];
      const float* c = table.cos(p);
      const float* sn = table.sin(p);
      float* row = qkv + t * ld;
      for (std::size_t h = 0; h < rotated_heads; ++h)
        rotate(row + h * head_dim, c, sn, table.half(), interleaved);
    }
  });
}

}  // namespace warden::kernels

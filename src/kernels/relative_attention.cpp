#include "kernels/relative_attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace warden::kernels {

namespace {

float dot(const float* a, const float* b, std::size_t n) {
  float s = 0.0F;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// One (sequence, head). q, k, v: the head's first column of the sequence's first row (stride
// ld); kr, qr: the head's first column of the tables (stride ld_rel), or null.
void attend_head_relative(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                          std::size_t head_dim, float scale, const float* kr, const float* qr, std::size_t ld_rel,
                          const std::int32_t* rows_at_zero, float* out, std::size_t ld_out, std::vector<float>& scratch) {
  const auto n = static_cast<std::ptrdiff_t>(len);
  // The rows distances -(len-1) .. len-1 read: one contiguous range, the rows being
  // non-decreasing in the distance.
  const std::int32_t lo = rows_at_zero[-(n - 1)];
  const std::int32_t hi = rows_at_zero[n - 1];
  const auto width = static_cast<std::size_t>(hi - lo + 1);
  scratch.resize(2 * len * width + len);
  float* c2p = scratch.data();            // [len x width]: q_i · Kr[lo + w]
  float* p2c = c2p + len * width;         // [len x width]: k_j · Qr[lo + w]
  float* scores = p2c + len * width;      // one query's row
  for (std::size_t t = 0; t < len; ++t) {
    for (std::size_t w = 0; w < width; ++w) {
      const std::size_t row = static_cast<std::size_t>(lo) + w;
      c2p[t * width + w] = kr != nullptr ? dot(q + t * ld, kr + row * ld_rel, head_dim) : 0.0F;
      p2c[t * width + w] = qr != nullptr ? dot(k + t * ld, qr + row * ld_rel, head_dim) : 0.0F;
    }
  }
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const float* qi = q + i * static_cast<std::ptrdiff_t>(ld);
    float max_score = -INFINITY;
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      const auto w = static_cast<std::size_t>(rows_at_zero[i - j] - lo);
      const float s = dot(qi, k + j * static_cast<std::ptrdiff_t>(ld), head_dim) +
                      c2p[static_cast<std::size_t>(i) * width + w] + p2c[static_cast<std::size_t>(j) * width + w];
      scores[j] = s * scale;
      max_score = std::max(max_score, scores[j]);
    }
    float sum = 0.0F;
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      scores[j] = std::exp(scores[j] - max_score);
      sum += scores[j];
    }
    const float inv = 1.0F / sum;
    float* o = out + i * static_cast<std::ptrdiff_t>(ld_out);
    std::fill(o, o + head_dim, 0.0F);
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      const float p = scores[j] * inv;
      const float* vj = v + j * static_cast<std::ptrdiff_t>(ld);
      for (std::size_t d = 0; d < head_dim; ++d) o[d] += p * vj[d];
    }
  }
}

}  // namespace

void relative_attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
                        const AttentionShape& shape, const RelativePositions& rel, float* ctx, std::size_t ld_ctx,
                        ThreadPool* pool) {
  if (seq_offsets.size() < 2) return;
  const std::size_t sequences = seq_offsets.size() - 1;
  const std::size_t q_cols = shape.heads * shape.head_dim;
  if (rel.rows.size() != 2 * rel.max_distance + 1) {
    throw Error(ErrorKind::Internal, "relative_attention: the row table does not match max_distance");
  }
  for (std::size_t s = 0; s < sequences; ++s) {
    if (seq_offsets[s + 1] - seq_offsets[s] > rel.max_distance + 1) {
      throw Error(ErrorKind::Internal, "relative_attention: a sequence is longer than the row table covers");
    }
  }
  const std::int32_t* rows_at_zero = rel.rows.data() + rel.max_distance;
  auto run = [&](std::size_t task) {
    thread_local std::vector<float> scratch;  // only grows: no allocation once the longest was seen
    const std::size_t s = task / shape.heads;
    const std::size_t h = task % shape.heads;
    const std::size_t row0 = seq_offsets[s];
    const std::size_t len = seq_offsets[s + 1] - row0;
    if (len == 0) return;
    const float* base = qkv + row0 * ld_qkv + h * shape.head_dim;
    const std::size_t col = h * shape.head_dim;
    attend_head_relative(base, base + q_cols, base + 2 * q_cols, ld_qkv, len, shape.head_dim, shape.scale,
                         rel.pos_key != nullptr ? rel.pos_key + col : nullptr,
                         rel.pos_query != nullptr ? rel.pos_query + col : nullptr, rel.ld, rows_at_zero,
                         ctx + row0 * ld_ctx + col, ld_ctx, scratch);
  };
  const std::size_t tasks = sequences * shape.heads;
  if (pool != nullptr) {
    pool->parallel_for(tasks, run);
  } else {
    for (std::size_t t = 0; t < tasks; ++t) run(t);
  }
}

}  // namespace warden::kernels

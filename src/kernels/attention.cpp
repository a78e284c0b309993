#include "kernels/attention.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

namespace detail {

KeyRange block_keys(const ScoreBias* bias, std::size_t i0, std::size_t rows, std::size_t len,
                    std::size_t align) {
  std::size_t visible = bias != nullptr && bias->keys != 0 ? std::min(len, bias->keys) : len;
  if (bias != nullptr && bias->causal) visible = std::min(visible, i0 + rows);  // the last row's keys
  if (bias == nullptr || bias->window == 0) return {0, visible};
  const std::size_t w = bias->window;
  const std::size_t first = (i0 > w ? i0 - w : 0) / align * align;
  const std::size_t end = std::min(visible, i0 + rows + w);  // one past the last row's last key
  // (attention() refuses visible keys that leave a row under a window nothing to see)
  return {first, end > first ? end - first : 0};
}

void add_score_bias(const ScoreBias& bias, std::size_t i0, std::size_t rows, float* scores,
                    std::size_t ld_scores, std::size_t key0, std::size_t count) {
  if (bias.by_distance != nullptr) {
    for (std::size_t r = 0; r < rows; ++r) {
      // Row i reads the table from distance key0 - i onwards: a contiguous run.
      const float* t =
          bias.by_distance + static_cast<std::ptrdiff_t>(key0) - static_cast<std::ptrdiff_t>(i0 + r);
      float* s = scores + r * ld_scores;
      for (std::size_t j = 0; j < count; ++j) s[j] += t[j];
    }
  }
  if (bias.rows_at_zero != nullptr) {
    for (std::size_t r = 0; r < rows; ++r) {
      const auto i = static_cast<std::ptrdiff_t>(i0 + r);
      float* s = scores + r * ld_scores;
      const float* c2p = bias.c2p != nullptr ? bias.c2p + static_cast<std::size_t>(i) * bias.width : nullptr;
      for (std::size_t jj = 0; jj < count; ++jj) {
        const std::size_t j = key0 + jj;
        const auto w = static_cast<std::size_t>(bias.rows_at_zero[i - static_cast<std::ptrdiff_t>(j)]);
        float extra = 0.0F;
        if (c2p != nullptr) extra += c2p[w];
        if (bias.p2c != nullptr) extra += bias.p2c[j * bias.width + w];
        s[jj] += bias.scale * extra;
      }
    }
  }
  if (bias.causal) {
    for (std::size_t r = 0; r < rows; ++r) {
      float* s = scores + r * ld_scores;
      for (std::size_t j = std::max(key0, i0 + r + 1); j < key0 + count; ++j) s[j - key0] = -INFINITY;
    }
  }
  if (bias.window == 0) return;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = i0 + r;
    const std::size_t lo = i > bias.window ? i - bias.window : 0;  // first key row i sees
    const std::size_t hi = i + bias.window + 1;                    // one past its last
    float* s = scores + r * ld_scores;
    for (std::size_t jj = 0; jj < count; ++jj) {
      const std::size_t j = key0 + jj;
      if (j < lo || j >= hi) s[jj] = -INFINITY;
    }
  }
}

void attend_head_portable(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                          std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                          const ScoreBias* bias) {
  float* scores = scratch;
  for (std::size_t i = 0; i < len; ++i) {
    const float* qi = q + i * ld;
    const KeyRange keys = block_keys(bias, i, 1, len, 1);
    for (std::size_t jj = 0; jj < keys.count; ++jj) {
      const float* kj = k + (keys.first + jj) * ld;
      float dot = 0.0F;
      for (std::size_t d = 0; d < head_dim; ++d) dot += qi[d] * kj[d];
      scores[jj] = dot * scale;
    }
    if (bias != nullptr) add_score_bias(*bias, i, 1, scores, keys.count, keys.first, keys.count);
    float max_score = -INFINITY;
    for (std::size_t j = 0; j < keys.count; ++j) max_score = std::max(max_score, scores[j]);
    float sum = 0.0F;
    for (std::size_t j = 0; j < keys.count; ++j) {
      scores[j] = std::exp(scores[j] - max_score);
      sum += scores[j];
    }
    const float inv = 1.0F / sum;
    float* o = out + i * ld_out;
    for (std::size_t d = 0; d < head_dim; ++d) o[d] = 0.0F;
    for (std::size_t jj = 0; jj < keys.count; ++jj) {
      const float p = scores[jj] * inv;
      const float* vj = v + (keys.first + jj) * ld;
      for (std::size_t d = 0; d < head_dim; ++d) o[d] += p * vj[d];
    }
  }
}

}  // namespace detail

DistanceBias DistanceBias::alibi(std::span<const float> slopes, std::size_t max_distance) {
  return make(slopes.size(), max_distance, [&](std::size_t h, std::ptrdiff_t r) {
    return -slopes[h] * static_cast<float>(r < 0 ? -r : r);
  });
}

std::vector<float> alibi_slopes(std::size_t heads) {
  if (heads == 0) return {};
  auto power_of_two = [](std::size_t n) {
    // start = 2^(-8/n), slope i = start^(i + 1), in double as Python's floats, then rounded once.
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3.0)));
    std::vector<double> s(n);
    for (std::size_t i = 0; i < n; ++i) s[i] = start * std::pow(start, static_cast<double>(i));
    return s;
  };
  std::size_t n = 1;
  while (n * 2 <= heads) n *= 2;
  std::vector<double> slopes = power_of_two(n);
  if (n != heads) {
    const std::vector<double> wider = power_of_two(2 * n);
    for (std::size_t i = 0; slopes.size() < heads; i += 2) slopes.push_back(wider[i]);
  }
  return {slopes.begin(), slopes.end()};
}

void attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
               const AttentionShape& shape, float* ctx, std::size_t ld_ctx, ThreadPool* pool,
               const DistanceBias& bias, std::size_t window, std::span<const std::size_t> visible_keys) {
  if (seq_offsets.size() < 2) return;
  if (!visible_keys.empty() && visible_keys.size() + 1 != seq_offsets.size()) {
    throw Error(ErrorKind::Internal, "attention: visible_keys needs one count per sequence");
  }
  if (!bias.empty() && bias.heads() != shape.heads) {
    throw Error(ErrorKind::Internal, "attention: the distance bias needs one row per head");
  }
  const std::size_t kv_heads = shape.kv_heads == 0 ? shape.heads : shape.kv_heads;
  if (kv_heads == 0 || shape.heads % kv_heads != 0) {
    throw Error(ErrorKind::Internal, "attention: the query heads must be a multiple of the key/value heads");
  }
  const std::size_t sequences = seq_offsets.size() - 1;
  const std::size_t q_cols = shape.heads * shape.head_dim;
  const std::size_t kv_cols = kv_heads * shape.head_dim;
  const std::size_t group = shape.heads / kv_heads;
  std::size_t max_len = 0;
  for (std::size_t s = 0; s < sequences; ++s)
    max_len = std::max(max_len, seq_offsets[s + 1] - seq_offsets[s]);
  const KernelTable& table = kernel_table();
  const auto head_fn =
      shape.bf16_products && table.attend_head_bf16 != nullptr ? table.attend_head_bf16 : table.attend_head;
  if (!bias.empty() && max_len > bias.max_distance() + 1) {
    throw Error(ErrorKind::Internal, "attention: a sequence is longer than the distance bias covers");
  }
  const std::size_t scratch_floats = detail::attention_scratch_floats(shape.head_dim, max_len);
  auto run = [&](std::size_t task) {
    // Per-thread scratch that only grows: no allocation once the longest sequence was seen.
    thread_local std::vector<float> scratch;
    if (scratch.size() < scratch_floats) scratch.resize(scratch_floats);
    const std::size_t s = task / shape.heads;
    const std::size_t h = task % shape.heads;
    const std::size_t row0 = seq_offsets[s];
    const std::size_t len = seq_offsets[s + 1] - row0;
    if (len == 0) return;
    const float* rows = qkv + row0 * ld_qkv;
    const float* k = rows + q_cols + (h / group) * shape.head_dim;
    detail::ScoreBias terms;
    terms.causal = shape.causal && len > 1;
    if (!bias.empty()) terms.by_distance = bias.at_zero(h);
    // A window no shorter than the sequence masks nothing.
    if (window + 1 < len) terms.window = window;
    if (!visible_keys.empty() && visible_keys[s] != 0 && visible_keys[s] < len) {
      terms.keys = visible_keys[s];
      // Every row must see a key: under a window the last row's first is len - 1 - window.
      if (terms.window > 0 && len - 1 > terms.keys - 1 + terms.window) {
        throw Error(
            ErrorKind::Unsupported,
            fmt::format("attention: {} hidden tokens after {} visible ones reach past the {}-token window",
                        len - terms.keys, terms.keys, terms.window));
      }
    }
    const bool any = !bias.empty() || terms.window > 0 || terms.keys > 0 || terms.causal;
    head_fn(rows + h * shape.head_dim, k, k + kv_cols, ld_qkv, len, shape.head_dim, shape.scale,
            ctx + row0 * ld_ctx + h * shape.head_dim, ld_ctx, scratch.data(), any ? &terms : nullptr);
  };
  const std::size_t tasks = sequences * shape.heads;
  parallel_for(pool, tasks, run);
}

}  // namespace warden::kernels

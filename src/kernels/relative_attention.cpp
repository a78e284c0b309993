#include "kernels/relative_attention.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "kernels/kernel_table.hpp"

namespace warden::kernels {

void relative_attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
                        const AttentionShape& shape, const RelativePositions& rel, float* ctx,
                        std::size_t ld_ctx, ThreadPool* pool) {
  if (seq_offsets.size() < 2) return;
  const std::size_t sequences = seq_offsets.size() - 1;
  const std::size_t q_cols = shape.heads * shape.head_dim;
  if (rel.rows.size() != 2 * rel.max_distance + 1) {
    throw Error(ErrorKind::Internal, "relative_attention: the row table does not match max_distance");
  }
  const bool c2p = !rel.pos_key.empty();
  const bool p2c = !rel.pos_query.empty();
  if ((c2p && rel.pos_key.size() != shape.heads) || (p2c && rel.pos_query.size() != shape.heads)) {
    throw Error(ErrorKind::Internal, "relative_attention: one table per head is needed");
  }
  const std::size_t table_rows = c2p ? rel.pos_key.front().n() : p2c ? rel.pos_query.front().n() : 0;
  for (const auto& t : {rel.pos_key, rel.pos_query}) {
    for (const PackedLinear& l : t) {
      if (l.n() != table_rows || l.k() != shape.head_dim) {
        throw Error(ErrorKind::Internal, "relative_attention: a table has the wrong shape");
      }
    }
  }
  for (const std::int32_t row : rel.rows) {
    if (table_rows > 0 && (row < 0 || static_cast<std::size_t>(row) >= table_rows)) {
      throw Error(ErrorKind::Internal, "relative_attention: a distance maps outside the table");
    }
  }
  std::size_t max_len = 0;
  for (std::size_t s = 0; s < sequences; ++s)
    max_len = std::max(max_len, seq_offsets[s + 1] - seq_offsets[s]);
  if (max_len > rel.max_distance + 1) {
    throw Error(ErrorKind::Internal, "relative_attention: a sequence is longer than the row table covers");
  }
  const auto head_fn = kernel_table().attend_head;
  const std::int32_t* rows_at_zero = rel.rows.data() + rel.max_distance;
  auto run = [&](std::size_t task) {
    // Per-thread scratch that only grows: no allocation once the longest sequence was seen.
    thread_local std::vector<float> scratch;
    const std::size_t s = task / shape.heads;
    const std::size_t h = task % shape.heads;
    const std::size_t row0 = seq_offsets[s];
    const std::size_t len = seq_offsets[s + 1] - row0;
    if (len == 0) return;
    const std::size_t products = len * table_rows;
    const std::size_t attention_floats = detail::attention_scratch_floats(shape.head_dim, len);
    if (scratch.size() < 2 * products + attention_floats) scratch.resize(2 * products + attention_floats);
    float* c2p_out = scratch.data();
    float* p2c_out = c2p_out + products;
    const float* base = qkv + row0 * ld_qkv + h * shape.head_dim;
    detail::ScoreBias bias;
    bias.width = table_rows;
    bias.rows_at_zero = rows_at_zero;
    bias.scale = shape.scale;
    // Only the table rows this sequence's distances reach (one range: the rows never
    // decrease with the distance), rounded out to whole panels; a short sequence reads a
    // few of a table's hundreds of rows.
    const auto n = static_cast<std::ptrdiff_t>(len);
    const auto lo = static_cast<std::size_t>(rows_at_zero[-(n - 1)]);
    const auto hi = static_cast<std::size_t>(rows_at_zero[n - 1]);
    auto product = [&](const PackedLinear& table, const float* a, float* out) {
      const std::size_t nr = table.panel_width();
      const std::size_t first = lo / nr;
      linear(a, ld_qkv, len, table.panel_range(first, hi / nr + 1 - first), out + first * nr, table_rows);
    };
    if (c2p) {  // c2p[i][w] = q_i · Kr[w]
      product(rel.pos_key[h], base, c2p_out);
      bias.c2p = c2p_out;
    }
    if (p2c) {  // p2c[j][w] = k_j · Qr[w]
      product(rel.pos_query[h], base + q_cols, p2c_out);
      bias.p2c = p2c_out;
    }
    head_fn(base, base + q_cols, base + 2 * q_cols, ld_qkv, len, shape.head_dim, shape.scale,
            ctx + row0 * ld_ctx + h * shape.head_dim, ld_ctx, p2c_out + products,
            c2p || p2c ? &bias : nullptr);
  };
  const std::size_t tasks = sequences * shape.heads;
  parallel_for(pool, tasks, run);
}

}  // namespace warden::kernels

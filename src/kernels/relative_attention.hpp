#pragma once
// DeBERTa's disentangled self-attention over packed sequences: besides content to content
// (q_i · k_j), each score adds content to position (q_i · Kr[row(i - j)], "c2p") and position
// to content (k_j · Qr[row(i - j)], "p2c"), where Kr and Qr are the relative embedding table
// projected by the layer, and row() maps a distance to a row of them (model/relative_positions.hpp):
//   score(i, j) = scale · (q_i·k_j + q_i·Kr[row] + k_j·Qr[row]),   scale = 1/sqrt(3·head_dim)
// Per (sequence, head) it holds the c2p and p2c products for the rows that sequence's
// distances reach ([len x rows] each: linear in the length) and one row of scores at a time:
// never a [len x len] matrix.

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/attention.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

struct RelativePositions {
  const float* pos_key = nullptr;    // Kr [table rows x heads·head_dim] for c2p, or null (no c2p)
  const float* pos_query = nullptr;  // Qr, the same shape, for p2c, or null (no p2c)
  std::size_t ld = 0;                // row stride of both
  // rows[r + max_distance]: the table row of distance r = i - j, non-decreasing in r.
  std::span<const std::int32_t> rows;
  std::size_t max_distance = 0;  // sequences are at most max_distance + 1 tokens
};

// The contract of attention() (qkv layout, offsets, ctx), with the relative terms added to
// every score before the softmax. Throws Error(Internal) for a sequence longer than the rows cover.
void relative_attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
                        const AttentionShape& shape, const RelativePositions& rel, float* ctx, std::size_t ld_ctx,
                        ThreadPool* pool = nullptr);

}  // namespace warden::kernels

#pragma once
// DeBERTa's disentangled self-attention over packed sequences: besides content to content
// (q_i · k_j), each score adds content to position (q_i · Kr[row(i - j)], "c2p") and position
// to content (k_j · Qr[row(i - j)], "p2c"), where Kr and Qr are the relative embedding table
// projected by the layer, and row() maps a distance to a row of them (model/engine/relative_positions.hpp):
//   score(i, j) = scale · (q_i·k_j + q_i·Kr[row] + k_j·Qr[row]),   scale = 1/sqrt(3·head_dim)
// Per (sequence, head) the c2p and p2c products are two GEMMs against the head's slice of the
// tables ([len x table rows] each: linear in the length), and the scores are formed one block
// of query rows at a time by the ordinary attention kernel with those terms added: never a
// [len x len] matrix.

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/attention.hpp"
#include "kernels/gemm.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

struct RelativePositions {
  // Per head, that head's columns of Kr (c2p) and of Qr (p2c), [table rows x head_dim],
  // packed as the weights of a dense layer without bias; an empty span leaves the term out.
  std::span<const PackedLinear> pos_key;
  std::span<const PackedLinear> pos_query;
  // rows[r + max_distance]: the table row of distance r = i - j.
  std::span<const std::int32_t> rows;
  std::size_t max_distance = 0;  // sequences are at most max_distance + 1 tokens
};

// The contract of attention() (qkv layout, offsets, ctx), with the relative terms added to
// every score before the softmax. Throws Error(Internal) for a sequence longer than the
// rows cover or tables that do not match the heads.
void relative_attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
                        const AttentionShape& shape, const RelativePositions& rel, float* ctx,
                        std::size_t ld_ctx, ThreadPool* pool = nullptr);

}  // namespace warden::kernels

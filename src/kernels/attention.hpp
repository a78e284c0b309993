#pragma once
// Multi-head self-attention over packed sequences. Sequences of different lengths sit
// one after another in the token matrix (no padding), so each (sequence, head) pair
// attends only over its own tokens: no mask, no wasted work on pad positions.

#include <cstddef>
#include <span>

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

struct AttentionShape {
  std::size_t heads;
  std::size_t head_dim;
  float scale;  // usually 1/sqrt(head_dim)
};

// qkv: [tokens x ld_qkv], per token Q (heads*head_dim floats) at column 0, K at column
// q_cols, V at column 2*q_cols where q_cols = heads*head_dim. seq_offsets: S+1 ascending
// token offsets (sequence s is rows [seq_offsets[s], seq_offsets[s+1])). Writes
// ctx[t, h*head_dim + i] = sum_j softmax_j(scale * q_t·k_j) v_j[i] for each head h.
void attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
               const AttentionShape& shape, float* ctx, std::size_t ld_ctx, ThreadPool* pool = nullptr);

namespace detail {
// One (sequence, head): q/k/v point at that head's first column of the sequence's first
// row; rows have stride ld. `scratch` holds at least (head_dim + 4) * (len + 16) floats.
void attend_head_portable(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                          std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch);
void attend_head_avx2(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch);
void attend_head_avx512(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                        std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch);
// AArch64 only:
void attend_head_neon(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch);
}  // namespace detail

}  // namespace warden::kernels

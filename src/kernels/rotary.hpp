#pragma once
// Rotary position embeddings (RoPE), applied in place to the query and key heads of a packed
// QKV matrix after its projection, before attention: each pair (x_a, x_b) of a head's first
// `dims` values turns by the angle position · inv_freq[i],
//   x_a' = x_a·cos − x_b·sin,   x_b' = x_b·cos + x_a·sin,
// with the pairs (i, i + dims/2) ("rotate_half", GPT-NeoX) or (2i, 2i + 1) (interleaved,
// GPT-J). Positions count from 0 in each sequence. The angles' cosines and sines come from a
// table built once per forward pass, in the arithmetic the reference implementations use:
// freqs = float(position) · inv_freq in float32 (torch.outer), then cos and sin.

#include <cstddef>
#include <span>
#include <vector>

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

// 1 / base^(2i / dims) for i < dims / 2, in float32 as torch computes
// `1.0 / (base ** (torch.arange(0, dims, 2, dtype=torch.float32) / dims))`.
std::vector<float> rotary_inv_freq(double base, std::size_t dims);

class RotaryTable {
 public:
  RotaryTable() = default;
  // cos and sin of float(p) · inv_freq[i] for positions p < positions.
  static RotaryTable make(std::span<const float> inv_freq, std::size_t positions);

  [[nodiscard]] std::size_t half() const noexcept { return half_; }  // rotated pairs per head
  [[nodiscard]] std::size_t positions() const noexcept { return positions_; }
  [[nodiscard]] const float* cos(std::size_t p) const noexcept { return cos_.data() + p * half_; }
  [[nodiscard]] const float* sin(std::size_t p) const noexcept { return sin_.data() + p * half_; }

 private:
  std::size_t half_ = 0;
  std::size_t positions_ = 0;
  std::vector<float> cos_, sin_;
};

// Rotates the first 2·half() values of each of the first `rotated_heads` heads of every token of
// qkv (row stride ld): the query heads and the key heads that follow them (heads + kv_heads). Token t of
// sequence s (rows [seq_offsets[s], seq_offsets[s + 1])) is at position t − seq_offsets[s] and uses tables[s]
// (one table per sequence, possibly all the same one, each covering its sequence's length).
void apply_rotary(float* qkv, std::size_t ld, std::span<const std::size_t> seq_offsets,
                  std::size_t rotated_heads, std::size_t head_dim, std::span<const RotaryTable* const> tables,
                  bool interleaved, ThreadPool* pool = nullptr);

}  // namespace warden::kernels

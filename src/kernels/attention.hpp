#pragma once
// Multi-head self-attention over packed sequences. Sequences of different lengths sit
// one after another in the token matrix (no padding), so each (sequence, head) pair
// attends only over its own tokens: no mask, no wasted work on pad positions.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace warden {
class ThreadPool;
}

namespace warden::kernels {

struct AttentionShape {
  std::size_t heads;
  std::size_t head_dim;
  float scale;  // usually 1/sqrt(head_dim)
  // Grouped-query attention (Qwen3, Llama): kv_heads key and value heads, query head h reading
  // kv head h / (heads / kv_heads) — consecutive query heads share one, as HF's repeat_kv
  // expands them. 0: as many as query heads.
  std::size_t kv_heads = 0;
  // Causal (a decoder's): query i attends only to keys j <= i of its sequence.
  bool causal = false;
  // Q·Kᵀ and P·V over operands rounded to bfloat16 (float32 sums, scores and softmax), where
  // the CPU has AVX-512 BF16: twice the products per instruction. For encoders whose dense
  // layers are int8 or bf16 already (docs/precision.md); elsewhere the float32 kernel runs.
  bool bf16_products = false;
};

// A bias added to each head's scores that depends only on the distance j - i between key j
// and query i (positions counted within the sequence): ALiBi's -slope·|j - i| (JinaBERT),
// MPNet's learned bias of the distance's bucket. One row of 2·max_distance + 1 values per head,
// computed once at load: linear in the length, never an n x n table.
class DistanceBias {
 public:
  DistanceBias() = default;
  // value(h, r) for every head h < heads and distance r in [-max_distance, max_distance].
  template <typename Value>
  static DistanceBias make(std::size_t heads, std::size_t max_distance, Value value) {
    DistanceBias b(heads, max_distance);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < b.width(); ++i) {
        b.values_[h * b.width() + i] =
            value(h, static_cast<std::ptrdiff_t>(i) - static_cast<std::ptrdiff_t>(max_distance));
      }
    }
    return b;
  }
  // ALiBi with the given per-head slopes: -slope·|r|, the distance as a float times -slope
  // (one rounding, as the reference computes it).
  static DistanceBias alibi(std::span<const float> slopes, std::size_t max_distance);

  [[nodiscard]] bool empty() const noexcept { return values_.empty(); }
  [[nodiscard]] std::size_t heads() const noexcept { return heads_; }
  [[nodiscard]] std::size_t max_distance() const noexcept { return max_distance_; }
  // Head h's row, pointing at distance 0 (valid from -max_distance to max_distance).
  [[nodiscard]] const float* at_zero(std::size_t h) const noexcept {
    return values_.data() + h * width() + max_distance_;
  }

 private:
  DistanceBias(std::size_t heads, std::size_t max_distance)
      : heads_(heads), max_distance_(max_distance), values_(heads * (2 * max_distance + 1)) {}
  [[nodiscard]] std::size_t width() const noexcept { return 2 * max_distance_ + 1; }
  std::size_t heads_ = 0;
  std::size_t max_distance_ = 0;
  std::vector<float> values_;
};

// qkv: [tokens x ld_qkv], per token Q (heads·head_dim floats) at column 0, K (kv_heads·head_dim)
// at column q_cols = heads·head_dim, V at column q_cols + kv_heads·head_dim. seq_offsets: S+1
// ascending token offsets (sequence s is rows [seq_offsets[s], seq_offsets[s+1])).
// ctx[t, h*head_dim + i] = sum_j softmax_j(scale * q_t·k_j + bias_h(j - t)) v_j[i] for each
// head h, bias_h from `bias` when it is not empty (one row per head; every sequence at most
// max_distance + 1 tokens), else 0. The bias is added as the scores are formed, one block of
// query rows at a time. With a sliding window (window > 0, ModernBERT's local layers) query t
// attends only to keys with |j - t| <= window: each block of queries scores just the keys its
// rows can see, so a long sequence costs time linear in its length. visible_keys (empty, or one
// per sequence): sequence s's queries attend only to its first visible_keys[s] tokens (0: all).
void attention(const float* qkv, std::size_t ld_qkv, std::span<const std::size_t> seq_offsets,
               const AttentionShape& shape, float* ctx, std::size_t ld_ctx, ThreadPool* pool = nullptr,
               const DistanceBias& bias = {}, std::size_t window = 0,
               std::span<const std::size_t> visible_keys = {});

// ALiBi's head slopes for `heads` heads, as the reference implementations compute them: the
// geometric sequence 2^(-8/n), 2^(-16/n), ... for the largest power of two n <= heads, then
// (when heads is not a power of two) every other slope of the sequence for 2n, appended.
std::vector<float> alibi_slopes(std::size_t heads);

namespace detail {
// Terms added to the scores of one (sequence, head) before the softmax. DeBERTa's relative
// attention: score(i, j) += scale · (c2p[i][w] + p2c[j][w]) with w = rows_at_zero[i - j] (c2p
// and p2c have row stride `width`; either may be null; none when rows_at_zero is null).
// A distance bias: score(i, j) += by_distance[j - i] (none when null).
// A sliding window: score(i, j) = -inf where |i - j| > window (none when 0), as HF's additive
// sliding-window mask; the kernels do not compute the scores of keys no row of a block sees.
// Visible keys: every query row attends only to keys [0, keys) (none when 0), as HF's padding
// mask hides ColBERT's query-expansion [MASK] tokens from the rest while they still attend.
// Causal: score(i, j) = -inf where j > i, as a decoder's causal mask; the kernels do not compute
// the scores of keys past a block's last row.
struct ScoreBias {
  const float* c2p = nullptr;
  const float* p2c = nullptr;
  std::size_t width = 0;
  const std::int32_t* rows_at_zero = nullptr;
  float scale = 1.0F;
  const float* by_distance = nullptr;
  std::size_t window = 0;
  std::size_t keys = 0;
  bool causal = false;
};

// The keys [first, first + count) a block of query rows [i0, i0 + rows) of a len-token
// sequence scores: all the visible ones, or under a window those some row of the block sees, `first`
// rounded down to a multiple of `align` (the kernels' K^T and score rows stay aligned to their
// vector blocks; the extra keys are masked).
struct KeyRange {
  std::size_t first = 0;
  std::size_t count = 0;
};
KeyRange block_keys(const ScoreBias* bias, std::size_t i0, std::size_t rows, std::size_t len,
                    std::size_t align);

// Adds the bias to `rows` rows of scores of queries i0 ... against keys key0 ... key0 + count - 1
// (row stride ld_scores), and masks the keys outside the window (plain C++, shared by every
// ISA's attention).
void add_score_bias(const ScoreBias& bias, std::size_t i0, std::size_t rows, float* scores,
                    std::size_t ld_scores, std::size_t key0, std::size_t count);

// Floats of scratch one attend_head call needs: K transposed, a block of scores, and V copied
// into contiguous rows (V's rows are ld floats apart, often more than a page, and a long
// sequence's V is read once per block of queries: contiguous, the prefetchers keep it in cache).
constexpr std::size_t attention_scratch_floats(std::size_t head_dim, std::size_t len) {
  return (2 * head_dim + 8) * (len + 32);  // the bf16 kernel's pairs and bf16 Q fit too
}

// One (sequence, head): q/k/v point at that head's first column of the sequence's first
// row; rows have stride ld. `scratch` holds at least attention_scratch_floats(head_dim, len).
// bias may be null.
void attend_head_portable(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                          std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                          const ScoreBias* bias = nullptr);
void attend_head_avx2(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                      const ScoreBias* bias = nullptr);
void attend_head_avx512(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                        std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                        const ScoreBias* bias = nullptr);
// The same with bf16 products (AttentionShape::bf16_products); needs AVX-512 BF16. An odd
// head_dim runs attend_head_avx512.
void attend_head_avx512_bf16(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                             std::size_t head_dim, float scale, float* out, std::size_t ld_out,
                             float* scratch, const ScoreBias* bias = nullptr);
// AArch64 only:
void attend_head_neon(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                      const ScoreBias* bias = nullptr);
}  // namespace detail

}  // namespace warden::kernels

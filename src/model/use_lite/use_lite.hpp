#pragma once
// Universal Sentence Encoder Lite, the forward pass of its TF.js graph
// (../shared/fixtures/use-lite-graph.md) on the engine's kernels and packed batches:
//
//   x   = emb + (emb + timing(t))                 the embedding is added twice (graph §4)
//   per layer (pre-norm, 4 heads, no final norm):
//     r   = layer 0: x·Wpᵀ + bp (256 -> 512); layer 1: x
//     qkv = LN1(x)·Wqkvᵀ + b                       one GEMM
//     ctx = attention(qkv)                         per (sequence, head): no padding
//     x   = ctx·Woᵀ + bo + r                       residual fused into the epilogue
//     x   = relu(LN2(x)·W1ᵀ + b1)·W2ᵀ + b2 + x     ReLU and residual fused
//   pooled = mean of x over each sequence's tokens (zero for an empty sequence)
//   out    = l2normalize(tanh(pooled·Whᵀ + bh))    eps 1e-12 on the squared norm
//
// TF.js pads the batch and masks keys with a -1e9 bias, which gives them exactly zero
// weight; running each sequence's attention over its own tokens is the same computation,
// so a text gives the same vector alone or in any batch.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "core/aligned_buffer.hpp"
#include "kernels/dense.hpp"
#include "kernels/gemm.hpp"
#include "model/engine/embedding_table.hpp"
#include "model/engine/packed_image.hpp"
#include "model/engine/token_batch.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::use_lite {

struct UseLiteConfig {
  std::size_t vocab = 0;                // embedding rows (8002)
  std::size_t embedding = 0;            // 256
  std::size_t hidden = 0;               // 512
  std::size_t layers = 0;               // 2
  std::size_t heads = 0;                // 4
  std::size_t intermediate = 0;         // 1536
  std::size_t max_length = 0;           // 128: later tokens are dropped
  float layer_norm_eps = 0.0F;          // float32(1e-6), inside the rsqrt
  std::vector<float> attention_scales;  // per layer, applied to q·k
  float l2_eps = 0.0F;                  // float32(1e-12), on the squared norm
};

// Reads a converted folder's config.json; Error(CorruptFile) naming the key on anything
// that is not the architecture the engine implements.
UseLiteConfig read_use_lite_config(const std::filesystem::path& dir);

class UseLiteWorkspace {
 public:
  float* get(std::size_t slot, std::size_t floats);

 private:
  AlignedBuffer<float> buffers_[9];  // one per Slot (use_lite.cpp)
};

class UseLiteModel {
  struct Private {
    explicit Private() = default;
  };

 public:
  explicit UseLiteModel(Private /*only load() constructs*/) {}
  // Loads config.json and model.safetensors from a converted folder and packs the weights:
  // the dense layers and the embedding table in `precision` (docs/precision.md); the head,
  // LayerNorms and attention stay float32.
  static std::unique_ptr<UseLiteModel> load(const std::filesystem::path& dir, ThreadPool* pool,
                                            Precision precision = Precision::Float32);

  [[nodiscard]] Precision precision() const noexcept { return precision_; }
  // Whether the packed weights came from a packed image (model/engine/packed_image.hpp).
  [[nodiscard]] engine::PackedImageUse packed_image() const noexcept { return packed_image_; }
  // Bytes of weights held.
  [[nodiscard]] std::size_t weight_bytes() const noexcept;

  [[nodiscard]] const UseLiteConfig& config() const noexcept { return config_; }
  [[nodiscard]] std::size_t dim() const noexcept { return config_.hidden; }

  // Throws Error(InvalidInput) for ids outside the table or sequences over max_length
  // (the caller clips: the graph drops tokens from position 128 on).
  void validate(const engine::TokenBatch& batch) const;

  // L2-normalised embeddings, [batch.sequences() x dim()] into `out`. Empty sequences are
  // allowed (they give l2normalize(tanh(bh)), as the graph does). Call validate() first.
  void embed(const engine::TokenBatch& batch, UseLiteWorkspace& ws, ThreadPool* pool,
             std::span<float> out) const;
  // The last layer's states before mean pooling, [batch.tokens() x dim()] into `out`: what
  // embed() pools (TEI's /embed_all for this model). Call validate() first.
  void token_states(const engine::TokenBatch& batch, UseLiteWorkspace& ws, ThreadPool* pool,
                    std::span<float> out) const;

 private:
  struct Norm {
    std::vector<float> gamma, beta;
  };
  struct Layer {
    std::size_t in = 0;              // width the layer reads (256 for layer 0)
    kernels::DenseLayer projection;  // layer 0's residual projection; empty otherwise
    Norm attention_norm;
    kernels::DenseLayer qkv;
    kernels::DenseLayer attention_output;
    Norm ffn_norm;
    kernels::DenseLayer ffn_in;
    kernels::DenseLayer ffn_out;
  };

  void embed_tokens(const engine::TokenBatch& batch, float* x, float* scratch) const;
  // Runs the layers: the last states, [tokens x hidden] in `ws` (kState), valid until its
  // next use.
  const float* encode(const engine::TokenBatch& batch, UseLiteWorkspace& ws, ThreadPool* pool) const;

  UseLiteConfig config_;
  Precision precision_ = Precision::Float32;
  // The mapped weights (the float32 table is read in place) and the arena of everything
  // packed, declared before what points into them.
  std::unique_ptr<formats::ModelWeights> weights_;
  std::unique_ptr<Arena> arena_;
  engine::PackedImageUse packed_image_ = engine::PackedImageUse::Off;
  engine::EmbeddingTable embeddings_;  // vocab x embedding
  std::vector<float> timing_;          // max_length x embedding: [sin | cos] per position
  std::vector<Layer> layers_;
  kernels::PackedLinear head_;
};

}  // namespace warden::model::use_lite

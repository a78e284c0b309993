#pragma once
// Retrieval heads beside the pooled vector, on an encoder's last hidden states, as
// FlagEmbedding's M3 model (bge-m3) computes them from one forward pass:
//  * LexicalHead (`sparse_linear.pt`, Linear(hidden, 1)): a weight per token, ReLU(w·h + b);
//    a sequence's sparse vector keeps, per token id, its largest weight, leaving out the ids
//    the caller names (the tokenizer's cls/eos/pad/unk) and weights of zero.
//  * MultiVectorHead (`colbert_linear.pt`, Linear(hidden, d)): every token after the first
//    `skip_front` (bge-m3 drops CLS) projected and L2-normalised: ColBERT's token vectors.
// Both are float32 whatever the encoder's precision: they are a sliver of its compute.
//  * SpladeHead: a *ForMaskedLM checkpoint's MLM head (transform: dense, activation, LayerNorm;
//    decoder: the tied word embeddings and a bias) gives every token a logit per vocabulary id;
//    sentence-transformers' SpladePooling turns them into log(1 + ReLU(logit)) and takes the max
//    (or sum) over the sequence's tokens — special tokens included, as it does.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/sparse_vector.hpp"
#include "kernels/activation.hpp"
#include "kernels/dense.hpp"
#include "kernels/gemm.hpp"
#include "model/engine/layer_norm_weights.hpp"

namespace warden {
class ThreadPool;
}  // namespace warden
namespace warden::model::formats {
class ModelWeights;
}  // namespace warden::model::formats

namespace warden::model::heads {

struct LexicalHead {
  kernels::PackedLinear linear;  // hidden -> 1

  // hidden: [tokens x dim] packed; ids: the packed token ids; offsets: S+1 boundaries;
  // skip_ids: ids never reported (sorted). One vector per sequence.
  [[nodiscard]] std::vector<SparseVector> sparse(std::span<const float> hidden, std::size_t dim,
                                                 std::span<const std::uint32_t> ids,
                                                 std::span<const std::size_t> offsets,
                                                 std::span<const std::uint32_t> skip_ids,
                                                 ThreadPool* pool = nullptr) const;
};

struct MultiVectorHead {
  kernels::PackedLinear linear;  // hidden -> dim()
  std::size_t skip_front = 1;    // leading tokens of each sequence that get no vector

  [[nodiscard]] std::size_t dim() const noexcept { return linear.n(); }
  // Rows sequence s gets: its length less skip_front (never below zero).
  [[nodiscard]] std::size_t rows(std::size_t length) const noexcept {
    return length > skip_front ? length - skip_front : 0;
  }
  // hidden: [tokens x hidden] packed; out: per sequence rows(length) x dim() unit vectors,
  // packed in sequence order (sum of rows(length) x dim() floats).
  void vectors(std::span<const float> hidden, std::size_t hidden_dim, std::span<const std::size_t> offsets,
               std::vector<float>& out, ThreadPool* pool = nullptr) const;
};

struct SpladeHead {
  kernels::PackedLinear transform;  // hidden -> hidden, float32
  kernels::Activation activation = kernels::Activation::Gelu;
  engine::LayerNormWeights norm;
  float norm_eps = 1e-12F;
  kernels::DenseLayer decoder;  // vocab x hidden, in the encoder's precision (it is its size)
  std::vector<float> bias;      // vocab
  bool sum = false;             // pooling_strategy "sum" instead of "max"
  bool log1p_twice = false;     // activation_function "log1p_relu"

  [[nodiscard]] std::size_t vocab() const noexcept { return decoder.n(); }
  // hidden: [tokens x dim] packed; offsets: S+1 boundaries. The ids whose value is above zero.
  [[nodiscard]] std::vector<SparseVector> sparse(std::span<const float> hidden, std::size_t dim,
                                                 std::span<const std::size_t> offsets,
                                                 ThreadPool* pool = nullptr) const;
};

// The file names bge-m3's repo gives its heads (FlagEmbedding saves them with torch.save).
inline constexpr const char* kLexicalHeadFile = "sparse_linear.pt";
inline constexpr const char* kMultiVectorHeadFile = "colbert_linear.pt";

// ColBERT's projection, every token kept (skip_front 0): a PyLate/sentence-transformers Dense
// module's folder (config.json: in_features = hidden, out_features, bias, activation_function
// Identity; weights "linear.weight" [and "linear.bias"] in its model.safetensors or
// pytorch_model.bin), or Stanford's HF_ColBERT checkpoint's "linear.weight" (no bias). Another
// activation or use_residual is Error(Unsupported); a wrong shape Error(CorruptFile).
MultiVectorHead read_dense_module_head(const std::filesystem::path& module_dir, std::size_t hidden, Isa isa);
MultiVectorHead read_stanford_colbert_head(const formats::ModelWeights& weights, std::size_t hidden, Isa isa);

// The heads a model folder ships, each only when its file is there. A file that is not an
// nn.Linear(hidden, 1) (lexical) or nn.Linear(hidden, d) (multi-vector) state dict is
// Error(CorruptFile) naming it.
std::optional<LexicalHead> read_lexical_head(const std::filesystem::path& dir, std::size_t hidden, Isa isa);
std::optional<MultiVectorHead> read_multi_vector_head(const std::filesystem::path& dir, std::size_t hidden,
                                                      Isa isa);

}  // namespace warden::model::heads

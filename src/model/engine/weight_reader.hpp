#pragma once
// WeightReader: one checkpoint's tensors, by their HF names, into the engine's layers.

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/arena.hpp"
#include "core/cpu_features.hpp"
#include "core/precision.hpp"
#include "kernels/dense.hpp"
#include "kernels/gated_dense.hpp"
#include "kernels/gemm_int8.hpp"
#include "model/engine/embedding_table.hpp"
#include "model/engine/encoder.hpp"
#include "model/formats/weights.hpp"

namespace warden::model::engine {

// Reads weights by their HF names under one prefix ("" or "bert." ...) into the model's
// precision. Float32 tensors are read in place from the mapping; after a linear layer is
// packed into its own buffer, its pages in the mapping are released so that resident memory
// stays close to one copy. Int8 checkpoints (`warden quantize`) are read as they are for an
// int8 model and dequantised for any other precision.
class WeightReader {
 public:
  // Dense layers go into `arena` when given; a prefilled arena holds them already, and
  // their weights are not read.
  WeightReader(const formats::ModelWeights& weights, std::string prefix, Isa isa,
               Precision precision = Precision::Float32, Arena* arena = nullptr)
      : weights_(weights), prefix_(std::move(prefix)), isa_(isa), precision_(precision), arena_(arena) {}

  const formats::Tensor& tensor(std::string_view name, std::initializer_list<std::size_t> shape) const {
    return weights_.require(prefix_ + std::string(name), shape);
  }

  std::vector<float> floats(std::string_view name, std::initializer_list<std::size_t> shape) const;

  // A float32 table viewed in the mapping where possible (position and type embeddings).
  EmbeddingTable float_table(std::string_view name, std::size_t rows, std::size_t width) const;

  // Bytes table() puts in its arena: none when the table is a view of the mapping.
  std::size_t table_arena_bytes(std::string_view name, std::size_t rows, std::size_t width) const;

  // A table in the model's precision (the word embeddings): a view of the mapping when it
  // holds the table as it is needed, else converted into `arena`.
  EmbeddingTable table(std::string_view name, std::size_t rows, std::size_t width, Arena& arena) const;

  // LayerNorm parameters; old checkpoints call them gamma/beta. with_bias false: the norm has
  // none (nn.LayerNorm(bias=False)), and beta is zeros.
  LayerNormWeights layer_norm(std::string_view base, std::size_t n, bool with_bias = true) const;

  // The layers `bases` (each "<base>.weight" [rows x in] and "<base>.bias") stacked into
  // one [bases.size()·rows x in] layer in the model's precision.
  // with_bias false: the model has no bias there (nn.Linear(bias=False)); none is read.
  kernels::DenseLayer dense(std::initializer_list<std::string_view> bases, std::size_t rows, std::size_t in,
                            bool with_bias = true) const;
  // The same of parts with their own row counts (Q, then the narrower K and V of grouped-query
  // attention).
  struct DenseRows {
    std::string_view base;
    std::size_t rows;
  };
  kernels::DenseLayer dense(std::span<const DenseRows> parts, std::size_t in, bool with_bias = true) const;

  // A gated FFN input layer: "<base>.weight" [2·width x in] holds the activated rows, then the
  // gate rows (or, activated_first false, the other way round: GTE's [up | gate]);
  // "<base>.bias" is optional (JinaBERT's and GTE's have none).
  kernels::GatedDense gated(std::string_view base, std::size_t width, std::size_t in,
                            bool activated_first = true) const;

  // A gated FFN input layer from two tensors: "<activated>.weight" and "<gate>.weight", [width x
  // in] each (NomicBERT's fc12 and fc11), with their biases when with_bias.
  kernels::GatedDense gated_pair(std::string_view activated, std::string_view gate, std::size_t width,
                                 std::size_t in, bool with_bias) const;

  // A mixture-of-experts layer's expert matrices, `name` [experts·rows x in] itself (no
  // ".weight": NomicExpertMLP's w1 and w2), expert e's rows e·rows .. (e+1)·rows: each one layer
  // [rows x in] in the model's precision, or with `transposed` [in x rows] (w2 multiplies the
  // activations as it is stored: act · W2_e). Error(Unsupported) for an int8 checkpoint's.
  std::vector<kernels::DenseLayer> experts(std::string_view name, std::size_t experts, std::size_t rows,
                                           std::size_t in, bool transposed) const;

  // A float32 layer whatever the model's precision (the classification heads: they run on
  // one row per sequence, so precision there costs nothing).
  kernels::PackedLinear linear(std::string_view base, std::size_t out, std::size_t in,
                               bool with_bias = true) const;

 private:
  const formats::Tensor& weight(std::string_view base, std::size_t rows, std::size_t in) const;

  // A weight tensor as floats: a view when it is aligned float32, else `scratch` filled
  // (widened, or dequantised from int8).
  std::span<const float> weight_floats(std::string_view base, const formats::Tensor& t, std::size_t rows,
                                       std::size_t in, std::vector<float>& scratch) const;

  // An I8 tensor and its "<name>_scale" F32 [rows] as quantised rows.
  kernels::QuantizedRows int8_rows(const std::string& name, const formats::Tensor& t, std::size_t rows,
                                   std::size_t in) const;

  static std::vector<float> dequantize(const kernels::QuantizedRows& q, std::size_t in);

  const formats::ModelWeights& weights_;
  std::string prefix_;
  Isa isa_;
  Precision precision_;
  Arena* arena_;
};

}  // namespace warden::model::engine

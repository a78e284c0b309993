#pragma once
// The encoder an ONNX graph computes, read off it once the rewrite passes have reduced it:
// the embedding tables, then for each post-LN layer its dense layers, attention, activation
// and LayerNorms, in the order the graph chains them. What Warden's engine needs to run the
// same computation on its own kernels; model/onnx/onnx_encoder.hpp names the tensors as the
// family's checkpoints do.
//
// Every node of the graph must be placed; the first one that is not is named in the load
// error, with how far the encoder was read — never a silent wrong answer, never a slow
// fallback.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/onnx/onnx_model.hpp"
#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// A dense layer as the file stores it: weight [in x out] (MatMul's right-hand side), or
// [out x in] when out_in (a Gemm's transB); bias [out]; an INT8 weight's scale, one value or
// [out] (zero points are 0).
struct DenseTensors {
  Tensor weight;
  std::optional<Tensor> bias;
  std::optional<Tensor> scale;
  bool out_in = false;
  [[nodiscard]] std::int64_t outputs() const { return weight.dims[out_in ? 0 : 1]; }
};

// A sequence classifier's head on the first token: dense, activation ("tanh", "relu"), out.
struct ClassifierTensors {
  DenseTensors dense;
  std::string activation;
  DenseTensors out;
  std::string logits;  // the graph output
};

struct NormTensors {
  Tensor gamma;
  Tensor beta;
  float epsilon = 0.0F;
};

struct EncoderLayerTensors {
  DenseTensors query, key, value, attention_out, ffn_in, ffn_out;
  // ORT's fused Attention: Q, K and V in one [in x 3H] weight (query, key, value then unset).
  std::optional<DenseTensors> qkv;
  NormTensors attention_norm, ffn_norm;
  std::int64_t heads = 0;
  float scale = 0.0F;      // of QKᵀ, as the graph has it
  std::string activation;  // the FFN's: "gelu" (erf), "relu"
};

// The pooled output a SentenceTransformer's export has: "mean" (over the attention mask) or
// "cls" (the first token), L2-normalised or not.
struct PooledOutput {
  std::string mode;
  bool normalized = false;
  std::string output;  // the graph output (optimum's sentence_embedding)
};

struct EncoderTensors {
  // The graph inputs: token ids, token types ("" when the graph has none) and the 0/1 mask
  // ("" when no attention is masked).
  std::string input_ids, token_type_ids, attention_mask;
  Tensor word, position;
  std::optional<Tensor> type;
  bool zero_types = false;        // the graph takes every token's type as 0 (HF's zero buffer)
  std::int64_t padding_idx = -1;  // RoBERTa's position scheme's padding index; -1: absolute
  NormTensors embedding_norm;
  std::vector<EncoderLayerTensors> layers;
  std::string hidden_state;  // the graph output holding the last hidden state ("" when only a head's)
  std::optional<ClassifierTensors> classifier;
  std::optional<PooledOutput> pooled;
};

// Runs every rewrite pass, in the order their patterns nest.
void reduce_graph(RewriteGraph& graph);

// Reduces the graph (every pass, in order) and reads the encoder off it. Error(Unsupported)
// names the first node no pass could place (its name, op type and domain) and where the reading
// stopped; Error(CorruptFile) for a file that is not a valid graph (make_rewrite_graph).
EncoderTensors read_encoder_graph(const Model& model, std::string_view source);

}  // namespace warden::model::onnx

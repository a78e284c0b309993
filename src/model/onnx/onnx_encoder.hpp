#pragma once
// An encoder's weights from an ONNX file (optimum, fastembed, transformers.js exports, or any
// torch.onnx.export of the HF classes): the graph reduced and read (model/onnx/encoder_graph.hpp),
// its tensors named as the family's checkpoints name them, so that read_encoder packs them as it
// packs safetensors — the same kernels, no second engine. The tensors view the mapped file: a
// MatMul's [in x out] weight is presented as nn.Linear's [out x in] (Tensor::transposed) and
// transposed only while it is packed.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>

#include "model/engine/encoder.hpp"
#include "model/engine/encoder_reader.hpp"
#include "model/formats/weights.hpp"
#include "model/onnx/encoder_graph.hpp"

namespace warden::model::onnx {

// The ONNX file a model folder holds, as the exporters lay it out: model.onnx,
// onnx/model.onnx, model_optimized.onnx (fastembed), ... (docs/model-files.md); nullopt when none.
std::optional<std::filesystem::path> find_onnx_file(const std::filesystem::path& dir);

struct OnnxEncoder {
  formats::ModelWeights weights;
  onnx::EncoderTensors graph;  // what the graph computes, for the caller to check against config.json
  // Q, K and V stacked in one [3·hidden x hidden] tensor under the query's name (ORT's fused
  // Attention): read them with LayerNames whose k is empty.
  bool stacked_qkv = false;
};

// Checks that the graph computes the encoder `dims` describes (config.json's): the layers, heads,
// attention scale, LayerNorm epsilons, activation and position scheme. Error(CorruptFile)
// naming what disagrees: the graph is what ONNX Runtime would run, and Warden runs it or nothing.
void check_onnx_encoder(const onnx::EncoderTensors& graph, const engine::EncoderDims& dims,
                        const std::filesystem::path& file);

// How a *ForSequenceClassification checkpoint names its head's two layers ("pooler.dense" and
// "classifier" for BERT, ...), for a graph ending in one.
struct HeadNames {
  std::string_view dense, out;
};

// Reads `file` into weights named by `names` (no prefix) and, for a classifier, `head` (null:
// an embedder). The token type table is read as `type_rows` rows; where the graph takes every
// token's type as 0, each of them is its row 0. Errors: as onnx::ModelFile and
// onnx::read_encoder_graph; CorruptFile when the graph has a classification head and `head` is
// null, or the other way round.
OnnxEncoder open_onnx_encoder(const std::filesystem::path& file, const engine::LayerNames& names,
                              std::size_t type_rows, const HeadNames* head = nullptr);

}  // namespace warden::model::onnx

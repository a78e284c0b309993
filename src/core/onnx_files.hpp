#pragma once
// Where the exporters put a model's ONNX graph, in the order Warden reads a folder (or a hub
// repo) holding several: the full-precision graph (optimum's model.onnx, transformers.js's
// onnx/model.onnx, fastembed's model_optimized.onnx) before the quantised ones (optimum's and
// transformers.js's int8 files), and the float16 one last. Shared by the
// loader (model/onnx/onnx_encoder.hpp) and `warden pull` (hub/), which must agree on it.

#include <array>
#include <string_view>

namespace warden {

inline constexpr std::array<std::string_view, 10> kOnnxGraphFiles{
    "model.onnx",           "onnx/model.onnx",           "model_optimized.onnx", "onnx/model_optimized.onnx",
    "model_quantized.onnx", "onnx/model_quantized.onnx", "model_int8.onnx",      "onnx/model_int8.onnx",
    "model_fp16.onnx",      "onnx/model_fp16.onnx"};

// The names a graph's external data takes beside it: optimum's "<graph>_data" and torch's
// "<graph>.data" (model.onnx_data, model.onnx.data).
inline constexpr std::array<std::string_view, 2> kOnnxDataSuffixes{"_data", ".data"};

}  // namespace warden

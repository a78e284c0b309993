#pragma once
// Rewrite pass: a dense layer of int8 weights as ONNX Runtime's dynamic quantisation writes it
// (quantize_dynamic: the activations quantised at run time by DynamicQuantizeLinear, shared by
// the layers that read them):
//   Mul(Cast(MatMulInteger(x_q, W_q, x_zp, W_zp), float), Mul(x_scale, W_scale))
// with (x_q, x_scale, x_zp) = DynamicQuantizeLinear(x), or the fused form ORT's optimiser makes
// of it — com.microsoft's DynamicQuantizeMatMul(x, W_q, W_scale, W_zp[, bias]), or
// MatMulIntegerToFloat(x_q, W_q, x_scale, W_scale, x_zp, W_zp[, bias]) where the quantised x is
// shared — becomes
// warden.Dense(x, W_q, bias | "", W_scale): W_q the file's int8 [in x out] values and W_scale
// their scale, per tensor or per output column, when they are symmetric (every zero point 0, as
// quantize_dynamic's QInt8 weights are): Warden's int8 kernels then run them with the file's own
// values and scales. Asymmetric weights (QUInt8, transformers.js's model_uint8.onnx) become the
// float weight (W_q - W_zp) · W_scale, added as a constant: Dense(x, W, bias | ""). (Run before
// fuse_dense, which takes the bias Add that follows into the layer.)

#include <cstddef>

#include "model/onnx/rewrite_graph.hpp"

namespace warden::model::onnx {

// The number of quantised dense layers made.
std::size_t fuse_quantized_dense(RewriteGraph& graph);

}  // namespace warden::model::onnx

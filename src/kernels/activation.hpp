#pragma once

namespace warden::kernels {

// Element-wise functions a GEMM epilogue can apply to A·Wᵀ + b.
enum class Activation {
  None,
  Gelu,  // exact: x/2·(1 + erf(x/√2)), as BERT's "gelu" (not the tanh approximation)
  Relu,
  Tanh,
  Silu,      // x·sigmoid(x) = x / (1 + e^-x), torch's F.silu (SwiGLU's gate)
  GeluTanh,  // x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))): "gelu_pytorch_tanh", "gelu_new" (Gemma's MLP)
};

}  // namespace warden::kernels

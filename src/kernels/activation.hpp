#pragma once

#include <cstddef>

namespace warden {
class ThreadPool;
}

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

// x = act(x) in place, over `rows` rows of `width` values (row stride ld): for a sum that had to be
// completed before its activation (a GEMM plus a low-rank update).
void activate_rows(float* x, std::size_t ld, std::size_t rows, std::size_t width, Activation act,
                   ThreadPool* pool = nullptr);

}  // namespace warden::kernels

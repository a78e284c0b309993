#pragma once
// A mixture-of-experts feed-forward (nomic-embed-text-v2-moe's NomicMoELayer): a float32 router
// scores every token against each expert, softmax turns the scores into probabilities, and the
// token goes through its top-k experts (each act(x·W1ᵀ)·W2, no biases), their outputs weighted by
// those probabilities (not renormalised) and summed, plus one output bias shared by the experts.
// The tokens are batched by expert: all of one expert's tokens of a batch are gathered into one
// matrix and run as one pair of GEMMs, then scattered back, so a batch costs k GEMM pairs' worth
// of rows however its tokens are routed.

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/activation.hpp"
#include "kernels/dense.hpp"
#include "kernels/gemm.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::model::engine {

struct MoeFfn {
  kernels::PackedLinear router;           // [experts x hidden], float32 whatever the model's precision
  std::vector<kernels::DenseLayer> up;    // per expert [width x hidden]
  std::vector<kernels::DenseLayer> down;  // per expert [hidden x width]
  std::vector<float> bias;                // [hidden]
  std::size_t top_k = 0;

  [[nodiscard]] bool empty() const noexcept { return up.empty(); }
  [[nodiscard]] std::size_t experts() const noexcept { return up.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept;
};

// Scratch a call needs for `tokens` rows, in floats: the router's scores, and the gathered
// inputs, activations and outputs of the busiest expert.
struct MoeScratch {
  std::vector<float> scores;
  std::vector<float> gathered, activated, expert_out;
};

// out[tokens x hidden] = the layer's output for in[tokens x hidden] (rows `ld` floats apart in
// both), the bias added; `activation` is the experts'.
void moe_ffn(const float* in, std::size_t ld, std::size_t tokens, std::size_t hidden, const MoeFfn& layer,
             kernels::Activation activation, float* out, MoeScratch& scratch, ThreadPool* pool);

}  // namespace warden::model::engine

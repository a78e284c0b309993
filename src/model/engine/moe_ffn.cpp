#include "model/engine/moe_ffn.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace warden::model::engine {

std::size_t MoeFfn::bytes() const noexcept {
  std::size_t b = router.bytes() + bias.size() * sizeof(float);
  for (const auto& l : up) b += l.bytes();
  for (const auto& l : down) b += l.bytes();
  return b;
}

namespace {

struct Choice {
  std::size_t expert;
  float weight;
};

// NomicRouter.forward: softmax of the scores in float32, the top k kept as they are (no
// renormalisation: the kept probabilities sum to less than one). Ties go to the lower expert.
void route(std::span<const float> scores, std::size_t top_k, std::span<Choice> out) {
  const std::size_t n = scores.size();
  float max = -std::numeric_limits<float>::infinity();
  for (const float s : scores) max = std::max(max, s);
  std::vector<float> p(n);
  float sum = 0.0F;
  for (std::size_t e = 0; e < n; ++e) {
    p[e] = std::exp(scores[e] - max);
    sum += p[e];
  }
  for (float& v : p) v /= sum;
  std::vector<bool> taken(n, false);
  for (std::size_t j = 0; j < top_k; ++j) {
    std::size_t best = n;
    for (std::size_t e = 0; e < n; ++e) {
      if (!taken[e] && (best == n || p[e] > p[best])) best = e;
    }
    taken[best] = true;
    out[j] = {best, p[best]};
  }
}

}  // namespace

void moe_ffn(const float* in, std::size_t ld, std::size_t tokens, std::size_t hidden, const MoeFfn& layer,
             kernels::Activation activation, float* out, MoeScratch& scratch, ThreadPool* pool) {
  const std::size_t experts = layer.experts();
  const std::size_t k = layer.top_k;
  scratch.scores.resize(tokens * experts);
  kernels::linear(in, ld, tokens, layer.router, scratch.scores.data(), experts, {}, pool);
  std::vector<Choice> choices(tokens * k);
  std::vector<std::size_t> count(experts, 0);
  for (std::size_t t = 0; t < tokens; ++t) {
    route(std::span<const float>(scratch.scores).subspan(t * experts, experts), k,
          std::span<Choice>(choices).subspan(t * k, k));
    for (std::size_t j = 0; j < k; ++j) ++count[choices[t * k + j].expert];
  }
  for (std::size_t t = 0; t < tokens; ++t) std::fill_n(out + t * ld, hidden, 0.0F);
  std::size_t busiest = 0;
  for (const std::size_t c : count) busiest = std::max(busiest, c);
  const std::size_t width = layer.up.front().n();
  scratch.gathered.resize(busiest * hidden);
  scratch.activated.resize(busiest * width);
  scratch.expert_out.resize(busiest * hidden);
  std::vector<std::size_t> rows;
  std::vector<float> weights;
  // Expert by expert, in order: each token's sum adds its experts' outputs in expert order, as
  // NomicExperts' index_add_ loop does.
  for (std::size_t e = 0; e < experts; ++e) {
    if (count[e] == 0) continue;
    rows.clear();
    weights.clear();
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t j = 0; j < k; ++j) {
        if (choices[t * k + j].expert == e) {
          rows.push_back(t);
          weights.push_back(choices[t * k + j].weight);
        }
      }
    }
    const std::size_t n = rows.size();
    for (std::size_t r = 0; r < n; ++r) {
      std::copy_n(in + rows[r] * ld, hidden, scratch.gathered.data() + r * hidden);
    }
    kernels::dense(scratch.gathered.data(), hidden, n, layer.up[e], scratch.activated.data(), width,
                   {activation}, pool);
    kernels::dense(scratch.activated.data(), width, n, layer.down[e], scratch.expert_out.data(), hidden, {},
                   pool);
    for (std::size_t r = 0; r < n; ++r) {
      float* dst = out + rows[r] * ld;
      const float* src = scratch.expert_out.data() + r * hidden;
      for (std::size_t c = 0; c < hidden; ++c) dst[c] += src[c] * weights[r];
    }
  }
  for (std::size_t t = 0; t < tokens; ++t) {
    float* dst = out + t * ld;
    for (std::size_t c = 0; c < hidden; ++c) dst[c] += layer.bias[c];
  }
}

}  // namespace warden::model::engine

#pragma once
// The two vectors of a LayerNorm: y = (x - mean) / sqrt(var + eps) · gamma + beta. A norm
// without a bias (ModernBERT's norm_bias false) has beta all zeros; an empty gamma stands for
// an identity where a family has no norm (ModernBERT's first layer before attention).

#include <vector>

namespace warden::model::engine {

struct LayerNormWeights {
  std::vector<float> gamma;
  std::vector<float> beta;
};

}  // namespace warden::model::engine

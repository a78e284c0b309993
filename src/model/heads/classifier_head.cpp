#include "model/heads/classifier_head.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/layer_norm.hpp"
#include "model/heads/pooling.hpp"

namespace warden::model::heads {

void ClassifierHead::logits(std::span<const float> hidden, std::size_t dim,
                            std::span<const std::size_t> offsets, std::span<float> out_logits,
                            ThreadPool* pool) const {
  const std::size_t sequences = offsets.size() - 1;
  // The first token (or the mean, or the last token) of each sequence, gathered into a block.
  std::vector<float> first(sequences * dim);
  model::heads::pool(hidden, dim, offsets, pooling, first);
  if (dense.n() == 0) {
    kernels::linear(first.data(), dim, sequences, out, out_logits.data(), out.n(), {}, pool);
    return;
  }
  std::vector<float> mid(sequences * dense.n());
  kernels::linear(first.data(), dim, sequences, dense, mid.data(), dense.n(), {activation}, pool);
  if (!norm.gamma.empty()) {
    kernels::layer_norm(mid.data(), dense.n(), mid.data(), dense.n(), sequences, dense.n(), norm.gamma.data(),
                        norm.beta.data(), norm_eps);
  }
  kernels::linear(mid.data(), dense.n(), sequences, out, out_logits.data(), out.n(), {}, pool);
}

void ClassifierHead::apply(const HeadPass& pass, HeadResults& results) const {
  if (results.scores.size() != pass.sequences() * labels()) {
    throw Error(ErrorKind::Internal, fmt::format("classifier head: {} floats for {} sequences of {} labels",
                                                 results.scores.size(), pass.sequences(), labels()));
  }
  logits(pass.hidden, pass.dim, pass.offsets, results.scores, pass.pool);
}

}  // namespace warden::model::heads

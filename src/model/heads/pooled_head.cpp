#include "model/heads/pooled_head.hpp"

#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/heads/pooling.hpp"

namespace warden::model::heads {

void PooledHead::apply(const HeadPass& pass, HeadResults& out) const {
  const std::size_t rows = pass.sequences();
  if (out.dense.size() != rows * width()) {
    throw Error(ErrorKind::Internal, fmt::format("pooled head: {} floats for {} sequences of {}",
                                                 out.dense.size(), rows, width()));
  }
  // sentence-transformers masks the prompt's tokens out of mean/max pooling when the Pooling
  // module says include_prompt = false.
  const std::span<const std::size_t> skips =
      config_.include_prompt ? std::span<const std::size_t>() : pass.prompt_tokens;
  if (dense_.empty()) {
    pool(pass.hidden, pass.dim, pass.offsets, config_.mode, out.dense, skips);
    return;
  }
  std::vector<float> pooled(rows * hidden_);
  pool(pass.hidden, pass.dim, pass.offsets, config_.mode, pooled, skips);
  apply_dense_modules(dense_, pooled, rows, out.dense, pass.pool);
}

}  // namespace warden::model::heads

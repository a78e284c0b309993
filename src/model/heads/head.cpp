#include "model/heads/head.hpp"

#include "model/engine/token_batch.hpp"

namespace warden::model::heads {

HeadPass head_pass(const engine::TokenBatch& batch, std::span<const float> hidden, std::size_t dim,
                   ThreadPool* pool) noexcept {
  HeadPass pass;
  pass.hidden = hidden;
  pass.dim = dim;
  pass.ids = batch.ids;
  pass.offsets = batch.offsets;
  pass.pool = pool;
  return pass;
}

}  // namespace warden::model::heads

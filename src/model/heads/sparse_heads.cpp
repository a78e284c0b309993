#include "model/heads/sparse_heads.hpp"

namespace warden::model::heads {

void LexicalWeightsHead::apply(const HeadPass& pass, HeadResults& out) const {
  out.sparse = weights_.sparse(pass.hidden, pass.dim, pass.ids, pass.offsets, skip_ids_, pass.pool);
}

void SpladeWeightsHead::apply(const HeadPass& pass, HeadResults& out) const {
  out.sparse = weights_.sparse(pass.hidden, pass.dim, pass.offsets, pass.pool);
}

}  // namespace warden::model::heads

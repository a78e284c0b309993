#include "model/heads/token_vector_heads.hpp"

#include <algorithm>

namespace warden::model::heads {

void TokenVectorsHead::apply(const HeadPass& pass, HeadResults& out) const {
  const std::size_t d = weights_.dim();
  std::vector<float> vectors;
  weights_.vectors(pass.hidden, pass.dim, pass.offsets, vectors, pass.pool);
  out.multi.clear();
  out.multi.reserve(pass.sequences());
  std::size_t row = 0;
  for (std::size_t s = 0; s < pass.sequences(); ++s) {
    const std::size_t n = weights_.rows(pass.offsets[s + 1] - pass.offsets[s]);
    Embeddings m(n, d);
    std::copy_n(vectors.begin() + static_cast<std::ptrdiff_t>(row * d), n * d, m.values().begin());
    out.multi.push_back(std::move(m));
    row += n;
  }
}

void ColbertHead::apply(const HeadPass& pass, HeadResults& out) const {
  const std::size_t d = weights_.dim();
  std::vector<float> vectors;
  weights_.vectors(pass.hidden, pass.dim, pass.offsets, vectors, pass.pool);
  const auto skipped = [&](std::size_t token) {
    return std::binary_search(skiplist_.begin(), skiplist_.end(), pass.ids[token]);
  };
  out.multi.clear();
  out.multi.reserve(pass.sequences());
  for (std::size_t s = 0; s < pass.sequences(); ++s) {
    const std::size_t first = pass.offsets[s];
    const std::size_t end = pass.offsets[s + 1];
    // PyLate keeps every token of a query and drops a document's skiplist tokens (punctuation).
    const bool query = !pass.queries.empty() && pass.queries[s] != 0;
    const auto kept_token = [&](std::size_t t) { return query || !skipped(t); };
    std::size_t kept = 0;
    for (std::size_t t = first; t < end; ++t) kept += kept_token(t) ? 1 : 0;
    Embeddings m(kept, d);
    std::size_t row = 0;
    for (std::size_t t = first; t < end; ++t) {
      if (!kept_token(t)) continue;
      std::copy_n(vectors.begin() + static_cast<std::ptrdiff_t>(t * d), d, m.row(row++).begin());
    }
    out.multi.push_back(std::move(m));
  }
}

}  // namespace warden::model::heads

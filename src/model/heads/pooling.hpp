#pragma once
// From last hidden states to one vector per sequence: pooling (as sentence-transformers'
// Pooling module does it), L2 normalisation (torch.nn.functional.normalize) and
// Matryoshka truncation.

#include <cstddef>
#include <span>

#include "core/l2_normalize.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden::model::heads {

// hidden: [tokens x dim] packed; offsets: S+1 sequence boundaries; out: [S x dim].
// `skip_front[s]` leading tokens of sequence s are left out of mean/max pooling (prompt
// tokens when include_prompt is false); empty means none.
void pool(std::span<const float> hidden, std::size_t dim, std::span<const std::size_t> offsets,
          metadata::PoolingMode mode, std::span<float> out, std::span<const std::size_t> skip_front = {});

// Matryoshka truncation: keeps the first `keep` values of each `dim`-wide row, packing the
// rows to stride `keep` in place (the first rows*keep floats of `rows` hold the result).
// Re-normalise afterwards when the vectors are meant to be unit length. Requires
// 0 < keep <= dim (callers validate the user's `dimensions`).
void truncate_rows(std::span<float> rows, std::size_t dim, std::size_t keep);

}  // namespace warden::model::heads

#pragma once
// The one L2 normalisation rule, wherever a vector is made unit length (a model's Normalize
// module, the `normalize` option of HTTP and gRPC, the guard's probe, bulk jobs): x / max(||x||,
// 1e-12) per row, as torch.nn.functional.normalize(p=2, dim=-1), with the sum of squares in
// double so a 1024-d vector's norm loses no digits. A zero row stays zero. (The hashing
// embedder's own definition divides in float32 instead; it is the embedder's output, not a
// normalisation applied after.)

#include <cstddef>
#include <span>

namespace warden {

void l2_normalize(std::span<float> rows, std::size_t dim);

}  // namespace warden

#pragma once
// The AMX tile configuration the kernels use (every tile 16 rows x 64 bytes), for code outside
// the GEMMs that runs tile instructions too (bench/roofline.cpp). Call only where
// cpu_features().amx_int8 or amx_bf16 holds.

namespace warden::kernels::detail {

// Loads the configuration on the calling thread, once (it is per-thread state and is kept).
void amx_configure_tiles() noexcept;

}  // namespace warden::kernels::detail

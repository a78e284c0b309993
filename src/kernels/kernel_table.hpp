#pragma once
// Internal to the kernels: the per-instruction-set routines that do not depend on how a layer
// was packed, chosen once from the CPU (core's active_isa(), which WARDEN_ISA may lower) on
// first use, as ONNX Runtime's MLAS picks its platform's routines: callers go through the
// table instead of testing the ISA at each call. (A packed layer's tile kernel follows its
// packing, which records the ISA it was packed for: gemm.hpp, gemm_int8.hpp, gemm_bf16.hpp.)

#include <cstddef>
#include <cstdint>

#include "kernels/activation.hpp"
#include "kernels/attention.hpp"

namespace warden::kernels {

struct KernelTable {
  void (*layer_norm_rows)(const float* in, std::size_t ld_in, float* out, std::size_t ld_out,
                          std::size_t rows, std::size_t cols, const float* gamma, const float* beta,
                          float eps);
  void (*attend_head)(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                      std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                      const detail::ScoreBias* bias);
  // The bf16-product attention (AttentionShape::bf16_products); null where the CPU lacks it.
  void (*attend_head_bf16)(const float* q, const float* k, const float* v, std::size_t ld, std::size_t len,
                           std::size_t head_dim, float scale, float* out, std::size_t ld_out, float* scratch,
                           const detail::ScoreBias* bias);
  float (*int8_quantize_row)(const float* src, std::size_t k, std::size_t kp, std::int8_t* dst);
  void (*bf16_round_row)(const float* src, std::size_t k, std::size_t kp, std::uint16_t* dst);
  // The vectorised GEMM epilogues; null where there is none (the GEMM's portable loop runs).
  void (*int8_epilogue)(const std::int32_t* acc, std::size_t rows, std::size_t cols, const float* row_scales,
                        const float* col_scales, const float* bias, Activation act, const float* residual,
                        std::size_t ldr, float* c, std::size_t ldc);
  // out = act(x) ⊙ gate, row by row (gate null: act(x) alone; out may be x).
  void (*glu_rows)(const float* x, const float* gate, std::size_t ldx, std::size_t rows, std::size_t width,
                   Activation act, float* out, std::size_t ldo);
  void (*bf16_epilogue)(const float* acc, std::size_t rows, std::size_t cols, const float* bias,
                        Activation act, const float* residual, std::size_t ldr, float* c, std::size_t ldc);
  void (*project_rows)(const float* x, std::size_t ldx, std::size_t rows, std::size_t k, const float* w,
                       std::size_t r, float* out, std::size_t ldo);  // row_projection.hpp
};

// This CPU's table, chosen on the first call (thread-safe) and the same for the process.
const KernelTable& kernel_table() noexcept;

}  // namespace warden::kernels

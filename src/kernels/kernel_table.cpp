#include "kernels/kernel_table.hpp"

#include "core/cpu_features.hpp"
#include "kernels/attention.hpp"
#include "kernels/gated_dense.hpp"
#include "kernels/gemm_bf16.hpp"
#include "kernels/gemm_int8.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/row_projection.hpp"

namespace warden::kernels {

namespace {

KernelTable choose(Isa isa) {
  KernelTable t{detail::layer_norm_rows_portable,
                detail::attend_head_portable,
                nullptr,
                detail::int8_quantize_row_portable,
                detail::bf16_round_row_portable,
                nullptr,
                detail::glu_rows_portable,
                nullptr,
                detail::project_rows_portable};
#if defined(__x86_64__)
  if (has_avx512(isa)) {
    t.layer_norm_rows = detail::layer_norm_rows_avx512;
    t.attend_head = detail::attend_head_avx512;
    if (cpu_features().avx512_bf16) t.attend_head_bf16 = detail::attend_head_avx512_bf16;
    t.int8_quantize_row = detail::int8_quantize_row_avx512;
    t.bf16_round_row = detail::bf16_round_row_avx512;
    t.int8_epilogue = detail::int8_epilogue_avx512;
    t.bf16_epilogue = detail::bf16_epilogue_avx512;
    t.glu_rows = detail::glu_rows_avx512;
    t.project_rows = detail::project_rows_avx512;
  } else if (isa == Isa::Avx2) {
    t.layer_norm_rows = detail::layer_norm_rows_avx2;
    t.attend_head = detail::attend_head_avx2;
    t.int8_quantize_row = detail::int8_quantize_row_avx2;
    t.bf16_round_row = detail::bf16_round_row_avx2;
    t.int8_epilogue = detail::int8_epilogue_avx2;
    t.bf16_epilogue = detail::bf16_epilogue_avx2;
    t.glu_rows = detail::glu_rows_avx2;
    t.project_rows = detail::project_rows_avx2;
  }
#endif
#if defined(__aarch64__)
  if (isa == Isa::Neon) {
    t.layer_norm_rows = detail::layer_norm_rows_neon;
    t.attend_head = detail::attend_head_neon;
  }
#endif
  return t;
}

}  // namespace

const KernelTable& kernel_table() noexcept {
  static const KernelTable table = choose(active_isa());
  return table;
}

}  // namespace warden::kernels

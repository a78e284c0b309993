#pragma once
// This machine's own limits, measured at the start of a benchmark run, so that every engine
// figure can be read as a fraction of what the hardware allows ("how much is left").
//
// Compute peaks come from tight in-register loops of independent chains (no memory
// traffic): fp32 FMA (vfmadd on zmm), bf16 dot products (vdpbf16ps) and int8 dot products
// (vpdpbusd), per core and on `threads` cores at once. Bandwidths come from streaming
// loops over buffers the benchmark allocates: a STREAM-like triad over arrays far larger
// than any cache (DRAM), and repeated reads of a working set of a given size (the size of a
// model's weights: L2, L3 or DRAM, wherever that size lands on this machine).
//
// A forward pass is bounded below by max(work / compute peak, bytes / bandwidth); its
// "fraction of the roofline" is that bound over the measured time (1.0 = at the limit).

#include <cstddef>
#include <string>

namespace warden::bench {

struct Roofline {
  std::size_t threads = 0;
  // Operations per second (a multiply-add counts as 2), per core and for all threads.
  double fp32_core = 0, fp32_all = 0;
  double bf16_core = 0, bf16_all = 0;  // 0: the CPU has no AVX-512 BF16
  double int8_core = 0, int8_all = 0;  // 0: the CPU has no AVX-512 VNNI
  // AMX tile products (tdpbssd, tdpbf16ps); 0 where the process has no AMX.
  double amx_int8_core = 0, amx_int8_all = 0;
  double amx_bf16_core = 0, amx_bf16_all = 0;
  // Bytes per second, all threads.
  double dram_triad = 0;   // a[i] = b[i] + s·c[i] over 3 x 256 MiB
  double working_set = 0;  // reads of a working_set_bytes buffer, over and over
  std::size_t working_set_bytes = 0;

  // The compute peak of a dense-layer precision ("float32", "bfloat16", "int8"), all threads,
  // with the instruction the kernels use (AMX tiles when `amx`); falls back to fp32 where the
  // CPU lacks the instruction.
  [[nodiscard]] double compute_peak(const std::string& dtype, bool amx) const;
  // One JSON object (no newline).
  [[nodiscard]] std::string json() const;
};

// Measures everything; working_set_bytes is the read-bandwidth buffer (0: skip it). Takes
// about a second.
Roofline measure_roofline(std::size_t threads, std::size_t working_set_bytes);

// The roofline bound of one forward pass, in seconds: max(compute, bytes / bandwidth), where
// compute is dense_flops at the dtype's peak plus float_flops (attention, which runs in fp32
// whatever the dtype) at the fp32 peak, and bandwidth is the working-set figure when measured,
// else the DRAM triad. `memory_bound` says which of the two is larger.
double roofline_seconds(const Roofline& r, const std::string& dtype, bool amx, double dense_flops,
                        double float_flops, double bytes, bool* memory_bound = nullptr);

}  // namespace warden::bench

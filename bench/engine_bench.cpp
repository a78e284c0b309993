// Encoder forward-pass throughput and latency on a model folder, over a grid of batch
// sizes and sequence lengths, with synthetic token ids (timing does not depend on which
// ids). Prints the machine's roofline first (bench/roofline.hpp, with the layers' bytes as
// the working set), then one JSON object per grid point with its fraction of the fp32 peak
// (peak_fraction, the older figure) and of its roofline bound (roofline_fraction: compute or
// bandwidth, whichever limits that point; "bound" says which).
//
//   engine_bench --model-dir DIR [--threads N] [--batches 1,8,32] [--seqs 16,128,512]
//                [--min-seconds 1.0] [--adapter T]
//
// --adapter T runs every sequence with the model's task adapter T (jina-embeddings-v3's LoRA,
// applied on the fly); without it, the base weights: what a model with the adapter merged in
// would cost.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "model/encoder_model.hpp"
#include "roofline.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::size_t> parse_list(const std::string& s) {
  std::vector<std::size_t> out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    out.push_back(std::stoul(s.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir;
  std::size_t threads = warden::available_cpus();
  std::vector<std::size_t> batches{1, 8, 32};
  std::vector<std::size_t> seqs{16, 128, 512};
  double min_seconds = 1.0;
  std::string dtype = "float32";
  bool roofline_on = true;  // --roofline off: skip measuring it (profiling the engine alone)
  std::int32_t adapter = warden::model::engine::TokenBatch::kNoAdapter;
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::printf(
        "usage: engine_bench --model-dir DIR [--threads N] [--batches ..] [--seqs ..] [--min-seconds S] "
        "[--dtype float32|bfloat16|int8] [--roofline on|off] [--adapter T]\n");
    return 0;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--model-dir")
      model_dir = value;
    else if (flag == "--threads")
      threads = std::stoul(value);
    else if (flag == "--batches")
      batches = parse_list(value);
    else if (flag == "--seqs")
      seqs = parse_list(value);
    else if (flag == "--min-seconds")
      min_seconds = std::stod(value);
    else if (flag == "--dtype")
      dtype = value;
    else if (flag == "--roofline")
      roofline_on = value != "off";
    else if (flag == "--adapter")
      adapter = static_cast<std::int32_t>(std::stol(value));
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (model_dir.empty()) {
    std::fprintf(stderr, "usage: engine_bench --model-dir DIR [--threads N] [--batches ..] [--seqs ..]\n");
    return 2;
  }
  try {
    const auto precision = warden::parse_precision(dtype);
    if (!precision) {
      std::fprintf(stderr, "engine_bench: unknown dtype %s\n", dtype.c_str());
      return 2;
    }
    const auto model =
        warden::model::load_encoder_model(model_dir, nullptr, warden::active_isa(), *precision);
    const auto& d = model->encoder.dims();
    warden::ThreadPool pool(threads);
    const std::size_t layer_bytes = model->encoder.layer_bytes();
    const auto roofline =
        roofline_on ? warden::bench::measure_roofline(pool.size(), layer_bytes) : warden::bench::Roofline{};
    const double peak = roofline.fp32_all;
    // The dense layers run on AMX tiles when the ISA is amx and the CPU has them for the dtype.
    const bool uses_amx = warden::active_isa() == warden::Isa::Amx &&
                          ((*precision == warden::Precision::Int8 && warden::cpu_features().amx_int8) ||
                           (*precision == warden::Precision::BFloat16 && warden::cpu_features().amx_bf16));
    const std::string dtype_name(warden::precision_name(*precision));
    std::printf("%s\n", roofline.json().c_str());
    std::printf(
        "{\"peak_gflops\": %.1f, \"threads\": %zu, \"isa\": \"%s\", \"dtype\": \"%s\", "
        "\"weight_bytes\": %zu, \"layer_bytes\": %zu, \"adapter\": %d}\n",
        peak * 1e-9, pool.size(), std::string(warden::isa_name(warden::active_isa())).c_str(),
        dtype_name.c_str(), model->encoder.weight_bytes(), layer_bytes, adapter);
    std::mt19937 rng(1);
    std::uniform_int_distribution<std::uint32_t> id_dist(1000, static_cast<std::uint32_t>(d.vocab - 1));
    warden::model::engine::EncoderWorkspace ws;
    for (const std::size_t seq : seqs) {
      if (seq + d.position_offset > d.max_positions) continue;
      for (const std::size_t batch_size : batches) {
        warden::model::engine::TokenBatch batch;
        std::vector<std::uint32_t> ids(seq);
        for (std::size_t b = 0; b < batch_size; ++b) {
          for (auto& id : ids) id = id_dist(rng);
          batch.add(ids, {}, 0, adapter);
        }
        model->encoder.validate(batch);
        for (int w = 0; w < 2; ++w) (void)model->encoder.forward(batch, ws, &pool);  // warm-up
        std::vector<double> times;
        const auto start = Clock::now();
        while (times.size() < 5 ||
               std::chrono::duration<double>(Clock::now() - start).count() < min_seconds) {
          const auto t0 = Clock::now();
          (void)model->encoder.forward(batch, ws, &pool);
          times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
          if (times.size() >= 1000) break;
        }
        std::sort(times.begin(), times.end());
        const double med = times[times.size() / 2];
        const double tokens = double(batch_size * seq);
        const double h = double(d.hidden), inter = double(d.intermediate);
        const double dense_flops = double(d.layers) * 2 * tokens * h * (4 * h + 2 * inter);
        const double attention_flops =
            double(d.layers) * 4 * double(batch_size) * double(seq) * double(seq) * h;
        const double flops = dense_flops + attention_flops;
        bool memory_bound = false;
        const double bound = warden::bench::roofline_seconds(
            roofline, dtype_name, uses_amx, dense_flops, attention_flops, double(layer_bytes), &memory_bound);
        std::printf(
            "{\"engine\": \"warden\", \"dtype\": \"%s\", \"batch\": %zu, \"seq\": %zu, \"median_ms\": %.3f, "
            "\"p10_ms\": %.3f, "
            "\"p90_ms\": %.3f, \"runs\": %zu, \"tokens_per_s\": %.0f, \"gflops\": %.1f, \"peak_fraction\": "
            "%.3f, \"bound_ms\": %.3f, \"roofline_fraction\": %.3f, \"bound\": \"%s\"}\n",
            std::string(warden::precision_name(*precision)).c_str(), batch_size, seq, med * 1e3,
            times[times.size() / 10] * 1e3, times[times.size() * 9 / 10] * 1e3, times.size(), tokens / med,
            flops / med * 1e-9, peak > 0 ? flops / med / peak : 0.0, bound * 1e3, bound / med,
            memory_bound ? "bandwidth" : "compute");
        std::fflush(stdout);
      }
    }
  } catch (const warden::Error& e) {
    std::fprintf(stderr, "engine_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

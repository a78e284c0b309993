// The engine's own throughput on real texts, without HTTP: the denominator of the server
// overhead ratio in docs/benchmarks.md ("Server under load"). Loads the embedder exactly as
// `warden serve` does (same flags, same thread pool), then embeds the lines of a text file in
// rotation, `batch` texts per call, for at least --min-seconds per batch size. Prints one
// JSON object per batch size.
//
//   embedder_bench (--model NAME | --model-dir DIR) --texts FILE [--threads N] [--batches 1,8,32]
//                  [--min-seconds 5]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/hashing_embedder.hpp"
#include "embed/neural_embedder.hpp"
#include "embed/registry.hpp"

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
  std::string model;
  std::string model_dir;
  std::string texts_path;
  std::size_t threads = 0;
  std::string batches = "1";
  double min_seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--model") {
      model = value;
    } else if (flag == "--model-dir") {
      model_dir = value;
    } else if (flag == "--texts") {
      texts_path = value;
    } else if (flag == "--threads") {
      threads = std::stoul(value);
    } else if (flag == "--batches") {
      batches = value;
    } else if (flag == "--min-seconds") {
      min_seconds = std::stod(value);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if ((model.empty() == model_dir.empty()) || texts_path.empty()) {
    std::fprintf(stderr,
                 "usage: embedder_bench (--model NAME | --model-dir DIR) --texts FILE [--threads N] "
                 "[--batches 1,8,32] [--min-seconds 5]\n");
    return 2;
  }
  try {
    std::vector<std::string> texts;
    {
      std::ifstream in(texts_path);
      for (std::string line; std::getline(in, line);) {
        if (!line.empty()) texts.push_back(std::move(line));
      }
    }
    if (texts.empty()) throw warden::Error(warden::ErrorKind::InvalidArgument, "no texts in " + texts_path);
    // The same choices as `warden serve`, so the two figures are of the same engine.
    std::unique_ptr<warden::ThreadPool> pool;
    std::unique_ptr<warden::embed::Embedder> embedder;
    if (!model_dir.empty()) {
      pool = std::make_unique<warden::ThreadPool>(threads);
      embedder = std::make_unique<warden::embed::NeuralEmbedder>(model_dir, pool.get());
    } else {
      if (model != warden::embed::HashingEmbedder::kId) pool = std::make_unique<warden::ThreadPool>(threads);
      embedder = warden::embed::make_builtin_embedder(model, pool.get());
    }
    for (const std::size_t batch : parse_list(batches)) {
      if (batch == 0) continue;
      std::vector<std::string_view> views(batch);
      std::size_t next = 0;
      auto embed_one_batch = [&] {
        for (auto& v : views) v = texts[next++ % texts.size()];
        const warden::Embeddings e = embedder->embed(views);
        if (e.rows() != batch) throw warden::Error(warden::ErrorKind::Internal, "wrong row count");
      };
      for (int i = 0; i < 3; ++i) embed_one_batch();  // warm-up: caches, arenas, pool threads
      std::vector<double> call_ms;
      const auto t0 = Clock::now();
      double elapsed = 0;
      while (elapsed < min_seconds || call_ms.size() < 5) {
        const auto c0 = Clock::now();
        embed_one_batch();
        const auto c1 = Clock::now();
        call_ms.push_back(std::chrono::duration<double, std::milli>(c1 - c0).count());
        elapsed = std::chrono::duration<double>(c1 - t0).count();
      }
      std::sort(call_ms.begin(), call_ms.end());
      const double inputs = static_cast<double>(call_ms.size() * batch);
      std::printf(
          "{\"engine\":\"embedder\",\"model\":\"%s\",\"threads\":%zu,\"batch\":%zu,\"calls\":%zu,\"inputs_"
          "per_s\":%.2f,"
          "\"median_call_ms\":%.3f,\"texts\":%zu}\n",
          std::string(embedder->id()).c_str(), pool ? pool->size() : 1, batch, call_ms.size(),
          inputs / elapsed, call_ms[call_ms.size() / 2], texts.size());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embedder_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

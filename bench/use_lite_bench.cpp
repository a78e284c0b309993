// USE-lite end to end (tokenizer + model), as `warden embed` runs it: sentences/s and
// latency at batch 1 and batch 32 over the 59 non-empty reference sentences (cycled), for the
// side-by-side with TF.js in bench/run_use_lite. One JSON object per batch size.
//
//   use_lite_bench --model-dir DIR --sentences FILE.jsonl [--threads N] [--min-seconds S]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/use_lite_embedder.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> read_sentences(const std::string& path) {
  const std::string all = warden::read_file(path);
  std::vector<std::string> out;
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    const std::string line = all.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    simdjson::dom::element doc;
    std::string_view text;
    if (parser.parse(line).get(doc) != simdjson::SUCCESS ||
        doc["text"].get_string().get(text) != simdjson::SUCCESS) {
      throw warden::Error(warden::ErrorKind::InvalidInput, path + ": a line without a \"text\" string");
    }
    // The empty sentence is left out, as the TF.js peer must (its WASM backend fails on "").
    if (!text.empty()) out.emplace_back(text);
  }
  return out;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir;
  std::string sentences_file;
  std::size_t threads = 0;
  double min_seconds = 2.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--model-dir") model_dir = value;
    if (flag == "--sentences") sentences_file = value;
    if (flag == "--threads") threads = std::stoul(value);
    if (flag == "--min-seconds") min_seconds = std::stod(value);
  }
  try {
    warden::ThreadPool pool(threads);
    const warden::embed::UseLiteEmbedder embedder(model_dir, &pool);
    const std::vector<std::string> sentences = read_sentences(sentences_file);
    for (const std::size_t batch : {std::size_t{1}, std::size_t{32}}) {
      std::vector<std::string_view> views(batch);
      std::size_t next = 0;
      auto fill = [&] {
        for (auto& v : views) v = sentences[next++ % sentences.size()];
      };
      for (int w = 0; w < 20; ++w) {  // warm-up: workspaces grow, pages fault in
        fill();
        (void)embedder.embed(views);
      }
      std::vector<double> latencies;
      const auto start = Clock::now();
      double elapsed = 0.0;
      while (elapsed < min_seconds || latencies.size() < 10) {
        fill();
        const auto t0 = Clock::now();
        const warden::Embeddings e = embedder.embed(views);
        latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (e.rows() != batch) return 1;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      }
      double total_ms = 0.0;
      for (const double l : latencies) total_ms += l;
      std::printf(
          "{\"impl\":\"warden\",\"model\":\"use-lite\",\"threads\":%zu,\"batch\":%zu,\"calls\":%zu,"
          "\"sentences_per_s\":%.1f,\"latency_ms_p50\":%.3f,\"latency_ms_p90\":%.3f}\n",
          pool.size(), batch, latencies.size(),
          static_cast<double>(latencies.size() * batch) / (total_ms / 1000.0), percentile(latencies, 0.5),
          percentile(latencies, 0.9));
    }
  } catch (const warden::Error& e) {
    std::fprintf(stderr, "use_lite_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}

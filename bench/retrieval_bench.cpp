// What bge-m3's three outputs cost against its dense vector alone, on the same prepared
// inputs: Embedder::embed_prepared (dense only, the /embed path) and Embedder::embed_retrieval
// (dense + sparse + multi-vector from one pass, the /embed_hybrid path), alternated call by
// call so that both see the same machine state. Prints one JSON object per shape with the
// median call time of each and their ratio.
//
//   retrieval_bench --model-dir DIR [--threads 2] [--shapes 1x16,32x128] [--calls 40]
//
// A shape BxT is B inputs of about T tokens each (a repeated sentence, cut to T tokens).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  std::size_t batch = 1;
  std::size_t tokens = 16;
};

std::vector<Shape> parse_shapes(const std::string& s) {
  std::vector<Shape> out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string one = s.substr(pos, end - pos);
    const auto x = one.find('x');
    if (x == std::string::npos)
      throw warden::Error(warden::ErrorKind::InvalidArgument, "shape " + one + " is not BxT");
    out.push_back({std::stoul(one.substr(0, x)), std::stoul(one.substr(x + 1))});
    pos = end + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir;
  std::size_t threads = 2;
  std::string shapes = "1x16,32x128";
  std::size_t calls = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--model-dir") {
      model_dir = value;
    } else if (flag == "--threads") {
      threads = std::stoul(value);
    } else if (flag == "--shapes") {
      shapes = value;
    } else if (flag == "--calls") {
      calls = std::stoul(value);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (model_dir.empty()) {
    std::fprintf(
        stderr, "usage: retrieval_bench --model-dir DIR [--threads 2] [--shapes 1x16,32x128] [--calls 40]\n");
    return 2;
  }
  try {
    warden::ThreadPool pool(threads);
    const warden::embed::NeuralEmbedder embedder(model_dir, &pool);
    const warden::embed::RetrievalOutputs has = embedder.retrieval_outputs();
    if (!has.sparse || !has.multi) {
      throw warden::Error(warden::ErrorKind::InvalidArgument,
                          model_dir + " has no sparse and multi-vector heads (warden-fixture --m3-heads)");
    }
    std::string text;
    for (int i = 0; i < 200; ++i)
      text += "The committee reviewed the quarterly figures and agreed to publish. ";
    for (const Shape& shape : parse_shapes(shapes)) {
      warden::embed::InputOptions cut;
      std::vector<warden::embed::PreparedInput> prepared;
      for (std::size_t b = 0; b < shape.batch; ++b) {
        warden::embed::PreparedInput p = embedder.prepare(text, cut);
        p.ids.resize(std::min(p.ids.size(), shape.tokens));  // the same ids, T tokens
        p.type_ids.clear();
        p.tokens = p.ids.size();
        prepared.push_back(std::move(p));
      }
      std::vector<const warden::embed::PreparedInput*> inputs;
      for (const auto& p : prepared) inputs.push_back(&p);
      std::vector<float> dense(shape.batch * embedder.dim());
      std::vector<double> dense_ms, all_ms;
      for (std::size_t c = 0; c < calls + 3; ++c) {
        const auto t0 = Clock::now();
        embedder.embed_prepared(inputs, dense);
        const auto t1 = Clock::now();
        const auto out = embedder.embed_retrieval(inputs);
        const auto t2 = Clock::now();
        if (out.size() != shape.batch) throw warden::Error(warden::ErrorKind::Internal, "wrong output count");
        if (c < 3) continue;  // warm-up
        dense_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        all_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
      }
      const double d = median(dense_ms), a = median(all_ms);
      std::printf(
          "{\"bench\":\"retrieval\",\"model\":\"%s\",\"threads\":%zu,\"batch\":%zu,\"tokens\":%zu,\"calls\":%"
          "zu,"
          "\"dense_median_ms\":%.3f,\"three_outputs_median_ms\":%.3f,\"ratio\":%.3f}\n",
          std::string(embedder.id()).c_str(), pool.size(), shape.batch, prepared[0].ids.size(), calls, d, a,
          a / d);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "retrieval_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

// The error each precision introduces (docs/precision.md): cosine between a model's outputs
// in bfloat16/int8 and in float32, on the same inputs.
//
//   dtype_accuracy_bench --model-dir DIR [--sequences N] [--seed S]
//     a HuggingFace encoder folder: N random token sequences (lengths 8..128), mean-pooled
//     and first-token ([CLS]) last hidden states
//   dtype_accuracy_bench --use-lite DIR --texts FILE.jsonl
//     the converted USE-lite folder on the reference sentences ({"text": ...} per line):
//     its final embeddings
// Prints one JSON line per precision: mean, min and p1 cosine vs float32.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

// GCC 12 sees a null dereference inside simdjson's parser at -O3 (a false positive).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/use_lite_embedder.hpp"
#include "kernels/dense.hpp"
#include "model/encoder_model.hpp"

namespace {

using warden::Precision;

double cosine(const float* a, const float* b, std::size_t n) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    dot += double(a[i]) * double(b[i]);
    na += double(a[i]) * double(a[i]);
    nb += double(b[i]) * double(b[i]);
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : (na == nb ? 1.0 : 0.0);
}

void report(const char* what, Precision p, std::vector<double> cos, std::size_t bytes,
            std::size_t f32_bytes) {
  std::sort(cos.begin(), cos.end());
  double sum = 0;
  for (const double c : cos) sum += c;
  std::printf(
      "{\"output\": \"%s\", \"dtype\": \"%s\", \"n\": %zu, \"mean_cos\": %.6f, \"min_cos\": %.6f, "
      "\"p1_cos\": %.6f, "
      "\"weight_bytes\": %zu, \"bytes_vs_f32\": %.3f}\n",
      what, std::string(warden::precision_name(p)).c_str(), cos.size(), sum / double(cos.size()), cos.front(),
      cos[cos.size() / 100], bytes, f32_bytes ? double(bytes) / double(f32_bytes) : 0.0);
  std::fflush(stdout);
}

// Mean-pooled and first-token rows of each sequence.
void pool_rows(const warden::model::engine::TokenBatch& batch, std::span<const float> hidden, std::size_t h,
               std::vector<float>& mean, std::vector<float>& first) {
  const std::size_t s = batch.sequences();
  mean.assign(s * h, 0.0F);
  first.assign(s * h, 0.0F);
  for (std::size_t i = 0; i < s; ++i) {
    for (std::size_t t = batch.offsets[i]; t < batch.offsets[i + 1]; ++t) {
      for (std::size_t j = 0; j < h; ++j) mean[i * h + j] += hidden[t * h + j];
    }
    std::copy_n(hidden.data() + batch.offsets[i] * h, h, first.data() + i * h);
  }
}

int run_folder(const std::string& dir, std::size_t sequences, unsigned seed, warden::ThreadPool& pool) {
  std::vector<float> ref_mean, ref_first;
  std::size_t f32_bytes = 0;
  warden::model::engine::TokenBatch batch;
  for (const Precision p : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    const auto model = warden::model::load_encoder_model(dir, &pool, warden::active_isa(), p);
    const auto& d = model->encoder.dims();
    if (batch.sequences() == 0) {
      std::mt19937 rng(seed);
      std::uniform_int_distribution<std::uint32_t> id(1000, static_cast<std::uint32_t>(d.vocab - 1));
      std::uniform_int_distribution<std::size_t> len(8, std::min<std::size_t>(128, d.max_positions - 2));
      for (std::size_t s = 0; s < sequences; ++s) {
        std::vector<std::uint32_t> ids(len(rng));
        for (auto& x : ids) x = id(rng);
        batch.add(ids);
      }
    }
    warden::model::engine::EncoderWorkspace ws;
    const std::size_t h = d.hidden;
    std::vector<float> mean, first;
    // Batches of 32, as a server runs them.
    std::vector<float> hidden(batch.tokens() * h);
    for (std::size_t s0 = 0; s0 < batch.sequences(); s0 += 32) {
      warden::model::engine::TokenBatch part;
      for (std::size_t s = s0; s < std::min(batch.sequences(), s0 + 32); ++s) {
        part.add(std::span<const std::uint32_t>(batch.ids).subspan(batch.offsets[s], batch.length(s)));
      }
      const auto out = model->encoder.forward(part, ws, &pool);
      std::copy(out.begin(), out.end(), hidden.begin() + static_cast<std::ptrdiff_t>(batch.offsets[s0] * h));
    }
    pool_rows(batch, hidden, h, mean, first);
    if (p == Precision::Float32) {
      ref_mean = mean;
      ref_first = first;
      f32_bytes = model->encoder.weight_bytes();
      continue;
    }
    std::vector<double> cm, cf;
    for (std::size_t s = 0; s < batch.sequences(); ++s) {
      cm.push_back(cosine(mean.data() + s * h, ref_mean.data() + s * h, h));
      cf.push_back(cosine(first.data() + s * h, ref_first.data() + s * h, h));
    }
    report("mean_pooled", p, cm, model->encoder.weight_bytes(), f32_bytes);
    report("first_token", p, cf, model->encoder.weight_bytes(), f32_bytes);
  }
  return 0;
}

int run_use_lite(const std::string& dir, const std::string& texts_file, warden::ThreadPool& pool) {
  std::vector<std::string> texts;
  simdjson::dom::parser parser;
  const std::string all = warden::read_file(texts_file);
  std::size_t pos = 0;
  while (pos < all.size()) {
    std::size_t nl = all.find('\n', pos);
    if (nl == std::string::npos) nl = all.size();
    const std::string line = all.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty()) texts.emplace_back(std::string_view(parser.parse(line)["text"]));
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<float> ref;
  std::size_t dim = 0;
  for (const Precision p : {Precision::Float32, Precision::BFloat16, Precision::Int8}) {
    const warden::embed::UseLiteEmbedder e(dir, &pool, p);
    const warden::Embeddings v = e.embed(views);
    dim = e.dim();
    if (p == Precision::Float32) {
      ref.assign(v.values().begin(), v.values().end());
      continue;
    }
    std::vector<double> c;
    for (std::size_t i = 0; i < texts.size(); ++i)
      c.push_back(cosine(v.values().data() + i * dim, ref.data() + i * dim, dim));
    report("use_lite_embedding", p, c, 0, 0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir, use_lite, texts;
  std::size_t sequences = 256;
  unsigned seed = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--model-dir")
      model_dir = value;
    else if (flag == "--use-lite")
      use_lite = value;
    else if (flag == "--texts")
      texts = value;
    else if (flag == "--sequences")
      sequences = std::stoul(value);
    else if (flag == "--seed")
      seed = static_cast<unsigned>(std::stoul(value));
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    warden::ThreadPool pool(2);
    if (!model_dir.empty()) return run_folder(model_dir, sequences, seed, pool);
    if (!use_lite.empty() && !texts.empty()) return run_use_lite(use_lite, texts, pool);
  } catch (const warden::Error& e) {
    std::fprintf(stderr, "dtype_accuracy_bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: dtype_accuracy_bench --model-dir DIR [--sequences N] | --use-lite DIR --texts FILE\n");
  return 2;
}

#include "model/heads/retrieval_heads.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/l2_normalize.hpp"
#include "kernels/layer_norm.hpp"
#include "model/engine/weight_reader.hpp"
#include "model/formats/weights.hpp"
#include "model/metadata/sentence_transformers.hpp"

namespace warden::model::heads {

std::vector<SparseVector> LexicalHead::sparse(std::span<const float> hidden, std::size_t dim,
                                              std::span<const std::uint32_t> ids,
                                              std::span<const std::size_t> offsets,
                                              std::span<const std::uint32_t> skip_ids,
                                              ThreadPool* pool) const {
  const std::size_t tokens = ids.size();
  std::vector<float> weights(tokens);
  kernels::linear(hidden.data(), dim, tokens, linear, weights.data(), 1, {kernels::Activation::Relu}, pool);
  std::vector<SparseVector> out(offsets.size() - 1);
  std::vector<std::pair<std::uint32_t, float>> entries;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    entries.clear();
    for (std::size_t t = offsets[s]; t < offsets[s + 1]; ++t) {
      // FlagEmbedding keeps an id only with a weight above zero, and its largest one.
      if (weights[t] > 0.0F && !std::binary_search(skip_ids.begin(), skip_ids.end(), ids[t])) {
        entries.emplace_back(ids[t], weights[t]);
      }
    }
    std::sort(entries.begin(), entries.end());
    SparseVector& v = out[s];
    for (const auto& [id, w] : entries) {
      if (!v.indices.empty() && v.indices.back() == id) {
        v.values.back() = std::max(v.values.back(), w);
      } else {
        v.indices.push_back(id);
        v.values.push_back(w);
      }
    }
  }
  return out;
}

std::vector<SparseVector> SpladeHead::sparse(std::span<const float> hidden, std::size_t dim,
                                             std::span<const std::size_t> offsets, ThreadPool* pool) const {
  const std::size_t v = vocab();
  // Tokens per product: a [chunk x vocab] block of logits (4 MB at 32 x 30522) instead of the
  // whole batch's, as SpladePooling's chunk_size does.
  constexpr std::size_t kChunk = 32;
  std::vector<float> mid(kChunk * dim);
  std::vector<float> logits(kChunk * v);
  std::vector<float> pooled(v);
  std::vector<SparseVector> out(offsets.size() - 1);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    std::fill(pooled.begin(), pooled.end(), 0.0F);  // ReLU: every value is >= 0
    for (std::size_t t0 = offsets[s]; t0 < offsets[s + 1]; t0 += kChunk) {
      const std::size_t n = std::min(kChunk, offsets[s + 1] - t0);
      kernels::linear(hidden.data() + t0 * dim, dim, n, transform, mid.data(), dim, {activation}, pool);
      kernels::layer_norm(mid.data(), dim, mid.data(), dim, n, dim, norm.gamma.data(), norm.beta.data(),
                          norm_eps);
      kernels::dense(mid.data(), dim, n, decoder, logits.data(), v, {}, pool);
      for (std::size_t r = 0; r < n; ++r) {
        const float* row = logits.data() + r * v;
        for (std::size_t id = 0; id < v; ++id) {
          const float logit = row[id] + bias[id];
          if (!(logit > 0.0F)) continue;  // log1p(ReLU(x)) is 0 there
          float x = std::log1p(logit);
          if (log1p_twice) x = std::log1p(x);
          pooled[id] = sum ? pooled[id] + x : std::max(pooled[id], x);
        }
      }
    }
    SparseVector& sv = out[s];
    for (std::size_t id = 0; id < v; ++id) {
      if (pooled[id] > 0.0F) {
        sv.indices.push_back(static_cast<std::uint32_t>(id));
        sv.values.push_back(pooled[id]);
      }
    }
  }
  return out;
}

void MultiVectorHead::vectors(std::span<const float> hidden, std::size_t hidden_dim,
                              std::span<const std::size_t> offsets, std::vector<float>& out,
                              ThreadPool* pool) const {
  const std::size_t d = dim();
  std::size_t total = 0;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) total += rows(offsets[s + 1] - offsets[s]);
  out.resize(total * d);
  std::size_t row = 0;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::size_t n = rows(offsets[s + 1] - offsets[s]);
    if (n == 0) continue;
    // A sequence's kept tokens are contiguous in the packed batch: one product per sequence.
    const float* first = hidden.data() + (offsets[s] + skip_front) * hidden_dim;
    kernels::linear(first, hidden_dim, n, linear, out.data() + row * d, d, {}, pool);
    row += n;
  }
  l2_normalize(out, d);
}

MultiVectorHead read_dense_module_head(const std::filesystem::path& module_dir, std::size_t hidden, Isa isa) {
  const auto config_path = module_dir / "config.json";
  const metadata::DenseModuleConfig config = metadata::read_dense_module_config(config_path);
  if (config.activation != metadata::DenseActivation::Identity) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: a ColBERT projection with the activation {} is not supported (Warden runs "
                            "Identity)",
                            config_path.string(), metadata::dense_activation_name(config.activation)));
  }
  if (config.in_features != hidden) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: in_features is {}, the encoder's hidden size {}",
                                                    config_path.string(), config.in_features, hidden));
  }
  const formats::ModelWeights weights = formats::ModelWeights::open_dir(module_dir);
  return MultiVectorHead{
      engine::WeightReader(weights, "", isa).linear("linear", config.out_features, hidden, config.bias), 0};
}

MultiVectorHead read_stanford_colbert_head(const formats::ModelWeights& weights, std::size_t hidden,
                                           Isa isa) {
  const formats::Tensor* w = weights.find("linear.weight");
  if (w == nullptr || w->shape.size() != 2 || w->shape[0] == 0 || w->shape[1] != hidden) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: a ColBERT (HF_ColBERT) checkpoint needs \"linear.weight\" [d x {}]",
                            weights.source().string(), hidden));
  }
  return MultiVectorHead{engine::WeightReader(weights, "", isa).linear("linear", w->shape[0], hidden, false),
                         0};
}

std::optional<LexicalHead> read_lexical_head(const std::filesystem::path& dir, std::size_t hidden, Isa isa) {
  const auto path = dir / kLexicalHeadFile;
  if (!std::filesystem::exists(path)) return std::nullopt;
  const formats::ModelWeights weights = formats::ModelWeights::open_file(path);
  return LexicalHead{engine::WeightReader(weights, "", isa).linear("", 1, hidden)};
}

std::optional<MultiVectorHead> read_multi_vector_head(const std::filesystem::path& dir, std::size_t hidden,
                                                      Isa isa) {
  const auto path = dir / kMultiVectorHeadFile;
  if (!std::filesystem::exists(path)) return std::nullopt;
  const formats::ModelWeights weights = formats::ModelWeights::open_file(path);
  const formats::Tensor* w = weights.find("weight");
  if (w == nullptr || w->shape.size() != 2 || w->shape[0] == 0 || w->shape[1] != hidden) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: expected the state dict of a Linear({}, d): a tensor \"weight\" [d x {}]",
                            path.string(), hidden, hidden));
  }
  return MultiVectorHead{engine::WeightReader(weights, "", isa).linear("", w->shape[0], hidden), 1};
}

}  // namespace warden::model::heads

#pragma once
// Static embedding models: one vector per token; a text's embedding is the mean of its
// tokens' vectors. No attention, no thread pool: a text costs one row read per token. Two
// file layouts, each computed by the rules of the library its repos are made for:
//
//  * model2vec (minishlab/potion-*, M2V_*): config.json ({"model_type": "model2vec",
//    "normalize": ...}), model.safetensors with "embeddings" [rows x dim] and, after
//    model2vec's vocabulary quantisation, "weights" [vocab] (a scale per token id) and
//    "mapping" [vocab] (token id -> row). model2vec's StaticModel.encode: the mean over the
//    tokens of weights[id] x embeddings[mapping[id]], then x / (||x|| + 1e-32) when normalize;
//    no tokens give zeros. (Which tokens, the embedder decides: model/ sees ids only.)
//  * sentence-transformers StaticEmbedding: modules.json's first module, whose folder holds
//    model.safetensors ("embedding.weight", or model2vec's "embeddings") and tokenizer.json;
//    nn.EmbeddingBag's mean, then the Normalize module when modules.json lists one (x /
//    max(||x||, 1e-12), core/l2_normalize.hpp).
//
// The table stays in the memory-mapped file when it is aligned float32 (no copy, resident
// only as far as texts touch it); float16/bfloat16/int8 tables are widened to float32 once.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/formats/weights.hpp"

namespace warden::model::static_models {

enum class StaticRules { Model2Vec, SentenceTransformers };

// Where a static model's files are, and which rules apply.
struct StaticLayout {
  StaticRules rules = StaticRules::Model2Vec;
  std::filesystem::path files;  // the folder holding model.safetensors and tokenizer.json
  bool normalize = false;       // model2vec's config "normalize", or a Normalize module
};

// The layout of `dir` when it is a static model (model2vec's config.json, or modules.json
// whose first module is a StaticEmbedding), nullopt for any other folder. Error(CorruptFile)
// naming the file when one of those files is malformed.
std::optional<StaticLayout> find_static_layout(const std::filesystem::path& dir);

class StaticModel {
 public:
  // Error(NotFound) for missing files, Error(CorruptFile) naming the tensor for a table,
  // weights or mapping of the wrong shape or dtype, or a mapping past the table.
  static std::unique_ptr<StaticModel> load(const StaticLayout& layout);
  // The vector width of the table, from the safetensors header alone (the catalog's
  // start-up check); the same errors as load() for the table.
  static std::size_t table_width(const StaticLayout& layout);

  [[nodiscard]] const StaticLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] std::size_t dim() const noexcept { return dim_; }
  // Token ids the model has a vector for: [0, vocab()).
  [[nodiscard]] std::size_t vocab() const noexcept { return vocab_; }
  // Bytes of the table (mapped or widened) and the per-token weights and mapping.
  [[nodiscard]] std::size_t bytes() const noexcept;

  // The embedding of one text's token ids (each < vocab()) into out (dim() floats), by the
  // layout's rules: mean, then the layout's normalisation. No ids: zeros.
  void embed(std::span<const std::uint32_t> ids, std::span<float> out) const;
  // The row of token `id`, weighted (what embed() averages), into out.
  void token_vector(std::uint32_t id, std::span<float> out) const;

 private:
  StaticModel() = default;

  StaticLayout layout_;
  std::unique_ptr<formats::ModelWeights> weights_;  // the mapping the table may view into
  std::span<const float> table_;                    // rows x dim_
  std::vector<float> widened_;                      // the table, when the file's was not aligned f32
  std::vector<float> token_weights_;                // [vocab_], empty: 1
  std::vector<std::uint32_t> rows_;                 // [vocab_] token -> row, empty: identity
  std::size_t dim_ = 0;
  std::size_t vocab_ = 0;
};

}  // namespace warden::model::static_models

// MPNet (modeling_mpnet.py): BERT-shaped layers named attn.q/k/v/o, positions counted as
// RoBERTa's from a fixed padding_idx of 1, no token types, and one bucketed relative-position
// bias shared by every layer.

#include <fmt/format.h>

#include "model/engine/relative_positions.hpp"
#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    {"MPNetModel", ClassRole::Encoder},
    // sentence-transformers' MPNet repos (all-mpnet-base-v2, multi-qa-mpnet-base-dot-v1) name the
    // masked-LM class over bare-model weights.
    {"MPNetForMaskedLM", ClassRole::MaskedLm},
    {"MPNetForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"mpnet"};

// MPNetLayer: MPNetAttention holds the projections as attn.q/k/v/o and its own LayerNorm;
// MPNetIntermediate/MPNetOutput are BERT's.
constexpr engine::LayerNames kNames{"encoder.layer.",     "attention.attn.q", "attention.attn.k",
                                    "attention.attn.v",   "attention.attn.o", "attention.LayerNorm",
                                    "intermediate.dense", "output.dense",     "output.LayerNorm"};

struct Settings : FamilySettings {
  // Rows of encoder.relative_attention_bias (MPNetConfig's default 32; the bucketing itself
  // always uses 32, whatever this says).
  std::size_t relative_attention_num_buckets = 32;
};

std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  metadata::config_keys::read_bert_shape(f, c);
  if (!f.has("type_vocab_size")) c.type_vocab_size = 0;  // MPNetConfig has no token types
  auto s = std::make_shared<Settings>();
  // MPNetEncoder.compute_position_bias reads buckets 0..31 of this table whatever it says.
  s->relative_attention_num_buckets = metadata::config_keys::optional_in(
      f, "relative_attention_num_buckets", 32, metadata::config_keys::kMaxPositions, 32);
  return s;
}

void plan(const metadata::ModelConfig& /*config*/, EncoderPlan& p, const std::filesystem::path& dir) {
  p.names = kNames;
  count_positions_after_padding(p, 1);  // MPNetEmbeddings fixes padding_idx at 1
  p.dims.type_vocab = 0;                // MPNetEmbeddings: word + position only
  if (p.dims.max_positions <= p.dims.position_offset) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: max_position_embeddings is {}, too small for MPNet's positions, which start at 2",
                    config_path(dir), p.dims.max_positions));
  }
}

// MPNetEncoder.compute_position_bias: relative_attention_bias ([buckets x heads]) at the bucket
// of each key-query distance j - i, computed once and added to every layer's scores after the
// 1/sqrt(head_dim) scaling (MPNetSelfAttention), so one distance table serves all layers.
void finish(const FinishSource& s, engine::EncoderWeights& weights) {
  const engine::EncoderDims& d = s.dims;
  const std::size_t buckets = settings_of<Settings>(s.config).relative_attention_num_buckets;
  const std::vector<float> table = engine::WeightReader(s.weights, s.prefix, Isa::Portable)
                                       .floats("encoder.relative_attention_bias.weight", {buckets, d.heads});
  weights.distance_bias =
      kernels::DistanceBias::make(d.heads, d.max_positions - 1, [&](std::size_t h, std::ptrdiff_t r) {
        return table[static_cast<std::size_t>(engine::mpnet_relative_bucket(r)) * d.heads + h];
      });
}

}  // namespace

extern const Family kMpnetFamily;
const Family kMpnetFamily{
    .name = "mpnet",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "mpnet.",
    .finish = finish,
    .classifier = roberta_classifier,  // MPNetClassificationHead: the same dense-tanh-out_proj on <s>
    .default_pad_token_id = 1,
    .positions_after_pad = true,
};

}  // namespace warden::model::families

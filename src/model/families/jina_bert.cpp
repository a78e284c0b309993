// JinaBERT (the remote code of jinaai/jina-bert-implementation; config model_type "bert"): BERT
// with ALiBi instead of a position table and, for the v2 embedders, a gated feed-forward
// (JinaBertGLUMLP).

#include <fmt/format.h>

#include "kernels/attention.hpp"
#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

constexpr FamilyClass kClasses[] = {
    {"JinaBertModel", ClassRole::Encoder},
    // The embedding repos name the masked-LM class over bare-model weights; Warden runs the
    // encoder and ignores the LM head.
    {"JinaBertForMaskedLM", ClassRole::MaskedLm},
    {"JinaBertForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kPositionTypes[] = {"absolute", "alibi"};

// JinaBertGLUMLP: gated_layers (no bias) = [activated | gate], wo, and the LayerNorm over the
// residual sum.
constexpr engine::LayerNames kGatedNames{"encoder.layer.",
                                         "attention.self.query",
                                         "attention.self.key",
                                         "attention.self.value",
                                         "attention.output.dense",
                                         "attention.output.LayerNorm",
                                         "",
                                         "mlp.wo",
                                         "mlp.layernorm",
                                         "mlp.gated_layers"};

struct Settings : FamilySettings {
  // "original" is BERT's feed-forward, "geglu"/"reglu" a gated one.
  std::string feed_forward_type = "original";
};

std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  metadata::config_keys::read_bert_shape(f, c);
  auto s = std::make_shared<Settings>();
  s->feed_forward_type = f.string("feed_forward_type").value_or("original");
  return s;
}

void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& dir) {
  // JinaBertEmbeddings has a position table only when the positions are absolute; with ALiBi the
  // encoder adds -slope·|i - j| to each head's scores instead (JinaBertEncoder's alibi).
  if (config.position_embedding_type == "alibi") {
    p.dims.position_embeddings = false;
    p.dims.alibi_slopes = kernels::alibi_slopes(p.dims.heads);
  }
  // JinaBertLayer: feed_forward_type ending in "glu" is the gated JinaBertGLUMLP (GEGLU: nn.GELU,
  // exact; ReGLU: ReLU), anything else BERT's intermediate/output pair.
  const std::string& ff = settings_of<Settings>(config).feed_forward_type;
  if (ff == "geglu" || ff == "reglu") {
    p.dims.gated_ffn = true;
    p.dims.ffn_activation = ff == "geglu" ? kernels::Activation::Gelu : kernels::Activation::Relu;
    p.names = kGatedNames;
  } else if (ff != "original") {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: feed_forward_type '{}' is not supported (original, geglu, reglu)",
                            config_path(dir), ff));
  }
}

// jina-bert-v2-qk-post-norm (the code embedders) normalises queries and keys: not run here.
void finish(const FinishSource& s, engine::EncoderWeights& /*weights*/) {
  if (s.weights.find(s.prefix + "encoder.layer.0.attention.self.layer_norm_q.weight") != nullptr) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: this JinaBERT checkpoint has query/key LayerNorms "
                    "(attention.self.layer_norm_q, the qk-post-norm variant), which Warden does not run",
                    s.weights.source().string()));
  }
}

}  // namespace

extern const Family kJinaBertFamily;
const Family kJinaBertFamily{
    .name = "jina-bert",
    .classes = kClasses,
    .model_types = {},  // its configs say model_type "bert": BERT's base_class finds it
    .read_config = read_config,
    .position_types = kPositionTypes,
    .plan = plan,
    .weight_prefix = "bert.",
    .finish = finish,
    .classifier = pooler_classifier,  // JinaBertForSequenceClassification: BERT's pooler and classifier
    .default_pad_token_id = 0,
};

}  // namespace warden::model::families

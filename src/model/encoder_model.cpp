#include "model/encoder_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "kernels/attention.hpp"
#include "model/encoder_reader.hpp"
#include "model/onnx_encoder.hpp"
#include "model/relative_positions.hpp"
#include "model/weight_reader.hpp"

namespace warden::model {

namespace {

struct ArchitectureName {
  std::string_view name;
  Architecture architecture;
  bool classifier;
};

constexpr std::array<ArchitectureName, 29> kArchitectures{{
    {"BertModel", Architecture::Bert, false},
    // Stanford ColBERT's checkpoints (colbert-ir/colbertv2.0): BertModel weights under "bert."
    // plus the projection "linear.weight".
    {"HF_ColBERT", Architecture::Bert, false},
    // The masked-LM classes: SPLADE's checkpoints (the MLM head read when the folder's modules
    // say SpladePooling), else the encoder alone.
    {"BertForMaskedLM", Architecture::Bert, false},
    {"RobertaForMaskedLM", Architecture::Roberta, false},
    {"XLMRobertaForMaskedLM", Architecture::Roberta, false},
    {"DistilBertForMaskedLM", Architecture::DistilBert, false},
    {"BertForSequenceClassification", Architecture::Bert, true},
    {"RobertaModel", Architecture::Roberta, false},
    {"RobertaForSequenceClassification", Architecture::Roberta, true},
    {"XLMRobertaModel", Architecture::Roberta, false},
    {"XLMRobertaForSequenceClassification", Architecture::Roberta, true},
    {"DistilBertModel", Architecture::DistilBert, false},
    {"DistilBertForSequenceClassification", Architecture::DistilBert, true},
    {"DebertaV2Model", Architecture::DebertaV2, false},
    {"DebertaV2ForSequenceClassification", Architecture::DebertaV2, true},
    // JinaBERT's remote code (jinaai/jina-bert-implementation). The embedding repos name the
    // masked-LM class over bare-model weights; Warden runs the encoder and ignores the LM head.
    {"JinaBertModel", Architecture::JinaBert, false},
    {"JinaBertForMaskedLM", Architecture::JinaBert, false},
    {"JinaBertForSequenceClassification", Architecture::JinaBert, true},
    // sentence-transformers' MPNet repos (all-mpnet-base-v2, multi-qa-mpnet-base-dot-v1) name the
    // masked-LM class over bare-model weights, as JinaBERT's do.
    {"MPNetModel", Architecture::MPNet, false},
    {"MPNetForMaskedLM", Architecture::MPNet, false},
    {"MPNetForSequenceClassification", Architecture::MPNet, true},
    // NomicBERT's remote code (nomic-ai/nomic-bert-2048): nomic-embed-text-v1/v1.5.
    {"NomicBertModel", Architecture::NomicBert, false},
    // GTE's remote code (Alibaba-NLP/new-impl): gte-*-en-v1.5, gte-multilingual-base/-reranker-base.
    {"NewModel", Architecture::Gte, false},
    {"NewForSequenceClassification", Architecture::Gte, true},
    // transformers' ModernBERT: gte-modernbert-base and modernbert-embed-base are ModernBertModel,
    // answerdotai/ModernBERT-* the masked-LM class (its LM head is ignored here).
    {"ModernBertModel", Architecture::ModernBert, false},
    {"ModernBertForMaskedLM", Architecture::ModernBert, false},
    {"ModernBertForSequenceClassification", Architecture::ModernBert, true},
    // Qwen3 used as an encoder: Qwen3-Embedding's config names the causal-LM class over bare
    // Qwen3Model weights; what the folder's sentence-transformers files say decides the job.
    {"Qwen3ForCausalLM", Architecture::Qwen3, false},
    {"Qwen3Model", Architecture::Qwen3, false},
}};

const ArchitectureName& find_architecture(const ModelConfig& config, const std::filesystem::path& dir) {
  std::string named;
  if (!config.architectures.empty()) {
    named = config.architectures.front();
  } else if (config.model_type == "bert") {  // configs without "architectures" are base models
    named = config.position_embedding_type == "alibi" ? "JinaBertModel" : "BertModel";
  } else if (config.model_type == "roberta") {
    named = "RobertaModel";
  } else if (config.model_type == "xlm-roberta") {
    named = "XLMRobertaModel";
  } else if (config.model_type == "distilbert") {
    named = "DistilBertModel";
  } else if (config.model_type == "deberta-v2") {
    named = "DebertaV2Model";
  } else if (config.model_type == "mpnet") {
    named = "MPNetModel";
  } else if (config.model_type == "nomic_bert") {
    named = "NomicBertModel";
  } else if (config.model_type == "new") {
    named = "NewModel";
  } else if (config.model_type == "modernbert") {
    named = "ModernBertModel";
  } else if (config.model_type == "qwen3") {
    named = "Qwen3Model";
  }
  for (const auto& a : kArchitectures) {
    if (a.name == named) return a;
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: unsupported architecture '{}' (model_type '{}'); supported: {}",
                          (dir / "config.json").string(), named.empty() ? "(none)" : named, config.model_type,
                          supported_architectures()));
}

// hidden_act (or another activation field `field`) as a kernel activation.
kernels::Activation activation_named(const std::string& name, std::string_view field,
                                     const std::filesystem::path& dir) {
  if (name == "gelu") return kernels::Activation::Gelu;
  if (name == "relu") return kernels::Activation::Relu;
  if (name == "tanh") return kernels::Activation::Tanh;
  if (name == "silu" || name == "swish") return kernels::Activation::Silu;
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: {} '{}' is not supported (supported: gelu, relu, tanh, silu)",
                          (dir / "config.json").string(), field, name));
}

constexpr LayerNames kBertNames{
    "encoder.layer.",       "attention.self.query",   "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
    "intermediate.dense",   "output.dense",           "output.LayerNorm"};

constexpr LayerNames kDebertaNames{"encoder.layer.",          "attention.self.query_proj",
                                   "attention.self.key_proj", "attention.self.value_proj",
                                   "attention.output.dense",  "attention.output.LayerNorm",
                                   "intermediate.dense",      "output.dense",
                                   "output.LayerNorm"};

// JinaBertGLUMLP: gated_layers (no bias) = [activated | gate], wo, and the LayerNorm over the
// residual sum.
constexpr LayerNames kJinaBertGatedNames{"encoder.layer.",
                                         "attention.self.query",
                                         "attention.self.key",
                                         "attention.self.value",
                                         "attention.output.dense",
                                         "attention.output.LayerNorm",
                                         "",
                                         "mlp.wo",
                                         "mlp.layernorm",
                                         "mlp.gated_layers"};

// MPNetLayer: MPNetAttention holds the projections as attn.q/k/v/o and its own LayerNorm;
// MPNetIntermediate/MPNetOutput are BERT's.
constexpr LayerNames kMpnetNames{"encoder.layer.",     "attention.attn.q", "attention.attn.k",
                                 "attention.attn.v",   "attention.attn.o", "attention.LayerNorm",
                                 "intermediate.dense", "output.dense",     "output.LayerNorm"};

// NomicBertBlock: attn.Wqkv (Q, K, V stacked), attn.out_proj, norm1; the gated MLP's fc11
// (multiplied) and fc12 (through the activation: fc11(x) · act(fc12(x))), or fc1 for the plain
// MLP; fc2; norm2. The embeddings' LayerNorm is NomicBertModel.emb_ln.
constexpr LayerNames kNomicNames{"encoder.layers.", "attn.Wqkv", "",         "",
                                 "attn.out_proj",   "norm1",     "mlp.fc1",  "mlp.fc2",
                                 "norm2",           "mlp.fc12",  "mlp.fc11", "emb_ln"};

// NewLayer (GTE): attention.qkv_proj (Q, K, V stacked; or q_proj/k_proj/v_proj without
// pack_qkv), attention.o_proj, attn_ln; NewGatedMLP's up_gate_proj ([up | gate], no bias,
// act(gate) · up) and down_proj; mlp_ln.
constexpr LayerNames kGtePackedNames{"encoder.layer.",
                                     "attention.qkv_proj",
                                     "",
                                     "",
                                     "attention.o_proj",
                                     "attn_ln",
                                     "",
                                     "mlp.down_proj",
                                     "mlp_ln",
                                     "mlp.up_gate_proj",
                                     "",
                                     "embeddings.LayerNorm",
                                     true};
constexpr LayerNames kGteNames{"encoder.layer.",
                               "attention.q_proj",
                               "attention.k_proj",
                               "attention.v_proj",
                               "attention.o_proj",
                               "attn_ln",
                               "",
                               "mlp.down_proj",
                               "mlp_ln",
                               "mlp.up_gate_proj",
                               "",
                               "embeddings.LayerNorm",
                               true};

// ModernBertEncoderLayer (pre-LN): attn_norm (none in layer 0), attn.Wqkv (Q, K, V stacked),
// attn.Wo, mlp_norm, mlp.Wi ([input | gate], act(input) · gate), mlp.Wo; ModernBertEmbeddings'
// tok_embeddings and norm; ModernBertModel's final_norm.
constexpr LayerNames kModernBertNames{"layers.",    "attn.Wqkv",
                                      "",           "",
                                      "attn.Wo",    "attn_norm",
                                      "",           "mlp.Wo",
                                      "mlp_norm",   "mlp.Wi",
                                      "",           "embeddings.norm",
                                      false,        "embeddings.tok_embeddings.weight",
                                      "final_norm", false};

// Qwen3DecoderLayer (pre-norm, RMSNorm): input_layernorm, self_attn.{q,k,v}_proj (K and V
// narrower under grouped-query attention), self_attn.q_norm / k_norm (one head each), o_proj,
// post_attention_layernorm, mlp: down_proj(silu(gate_proj(x)) · up_proj(x)); Qwen3Model's
// embed_tokens (no embedding norm) and the final norm.
constexpr LayerNames kQwen3Names{.layer_prefix = "layers.",
                                 .q = "self_attn.q_proj",
                                 .k = "self_attn.k_proj",
                                 .v = "self_attn.v_proj",
                                 .attn_out = "self_attn.o_proj",
                                 .attn_norm = "input_layernorm",
                                 .ffn_in = "",
                                 .ffn_out = "mlp.down_proj",
                                 .ffn_norm = "post_attention_layernorm",
                                 .ffn_gated = "mlp.gate_proj",
                                 .ffn_gate = "mlp.up_proj",
                                 .embedding_norm = "",
                                 .gate_first = false,
                                 .word_embeddings = "embed_tokens.weight",
                                 .final_norm = "norm",
                                 .first_attn_norm = true,
                                 .q_norm = "self_attn.q_norm",
                                 .k_norm = "self_attn.k_norm"};

constexpr LayerNames kDistilBertNames{"transformer.layer.", "attention.q_lin",   "attention.k_lin",
                                      "attention.v_lin",    "attention.out_lin", "sa_layer_norm",
                                      "ffn.lin1",           "ffn.lin2",          "output_layer_norm"};

// MPNetEncoder.compute_position_bias: relative_attention_bias ([buckets x heads]) at the bucket
// of each key-query distance j - i, computed once and added to every layer's scores after the
// 1/sqrt(head_dim) scaling (MPNetSelfAttention), so one distance table serves all layers.
kernels::DistanceBias mpnet_distance_bias(const ModelWeights& weights, const std::string& prefix,
                                          const EncoderDims& d, std::size_t buckets) {
  const std::vector<float> table = WeightReader(weights, prefix, Isa::Portable)
                                       .floats("encoder.relative_attention_bias.weight", {buckets, d.heads});
  return kernels::DistanceBias::make(d.heads, d.max_positions - 1, [&](std::size_t h, std::ptrdiff_t r) {
    return table[static_cast<std::size_t>(mpnet_relative_bucket(r)) * d.heads + h];
  });
}

// The MLM head of a *ForMaskedLM checkpoint, as transformers builds it: a transform (dense,
// activation, LayerNorm) and a decoder whose weight is tied to the word embeddings (safetensors
// keep one copy: the decoder's own weight only when it was saved) plus its bias.
//  * BertForMaskedLM (BertLMPredictionHead): cls.predictions.transform.{dense, LayerNorm},
//    config.hidden_act, layer_norm_eps; cls.predictions.bias.
//  * RobertaForMaskedLM / XLMRobertaForMaskedLM (RobertaLMHead): lm_head.{dense, layer_norm},
//    always the exact (erf) gelu, layer_norm_eps; lm_head.bias.
//  * DistilBertForMaskedLM: vocab_transform, config.activation, vocab_layer_norm (eps 1e-12);
//    vocab_projector's bias.
SpladeHead read_splade_head(const ModelWeights& weights, std::string_view architecture,
                            const std::string& prefix, const ModelConfig& config, const EncoderDims& dims,
                            Isa isa, Precision precision, const std::filesystem::path& dir) {
  struct Names {
    std::string_view transform, norm, decoder, bias, tied_bias;
  };
  const bool bert = architecture == "BertForMaskedLM";
  const bool roberta = architecture == "RobertaForMaskedLM" || architecture == "XLMRobertaForMaskedLM";
  const bool distilbert = architecture == "DistilBertForMaskedLM";
  if (!bert && !roberta && !distilbert) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: SPLADE pooling needs the MLM head of BertForMaskedLM, "
                            "(XLM)RobertaForMaskedLM or DistilBertForMaskedLM; '{}' has none Warden reads",
                            dir.string(), architecture));
  }
  const Names n =
      bert      ? Names{"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                   "cls.predictions.decoder", "cls.predictions.bias", "cls.predictions.decoder.bias"}
      : roberta ? Names{"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias",
                        "lm_head.decoder.bias"}
                : Names{"vocab_transform", "vocab_layer_norm", "vocab_projector", "vocab_projector.bias",
                        "vocab_projector.bias"};
  const std::size_t h = dims.hidden;
  const std::size_t vocab = dims.vocab;
  const WeightReader root(weights, "", isa);
  SpladeHead head;
  head.transform = root.linear(n.transform, h, h);
  head.activation =
      roberta ? kernels::Activation::Gelu : activation_named(config.hidden_act, "hidden_act", dir);
  head.norm = root.layer_norm(n.norm, h);
  head.norm_eps = distilbert ? 1e-12F : dims.layer_norm_eps;
  const std::string decoder_weight = std::string(n.decoder) + ".weight";
  const bool untied = weights.find(decoder_weight) != nullptr;
  head.decoder = WeightReader(weights, "", isa, precision)
                     .dense({untied ? n.decoder : std::string_view(prefix + "embeddings.word_embeddings")},
                            vocab, h, false);
  head.bias = root.floats(weights.find(n.bias) != nullptr ? n.bias : n.tied_bias, {vocab});
  return head;
}

// A ColBERT folder's projection and query/document settings: Stanford's HF_ColBERT checkpoint
// (linear.weight beside the encoder, artifact.metadata), or a PyLate folder (its
// config_sentence_transformers.json has query_prefix; modules.json's Dense module projects).
// Anything else is left as it is.
void read_colbert(EncoderModel& model, std::string_view architecture, Isa isa) {
  const std::filesystem::path& dir = model.dir;
  const std::size_t hidden = model.encoder.dims().hidden;
  if (architecture == "HF_ColBERT") {
    const auto metadata = dir / "artifact.metadata";
    model.colbert = parse_colbert_metadata(
        std::filesystem::exists(metadata) ? read_file(metadata) : std::string(), metadata.string());
    model.multi_vector = read_stanford_colbert_head(*model.weights, hidden, isa);
    return;
  }
  const auto st_config = dir / "config_sentence_transformers.json";
  if (!std::filesystem::exists(st_config)) return;
  const std::string text = read_file(st_config);
  if (!is_pylate_config(text, st_config.string())) return;
  const auto modules_path = dir / "modules.json";
  if (!std::filesystem::exists(modules_path)) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: a PyLate ColBERT folder needs modules.json naming its Dense module", dir.string()));
  }
  const StModules modules = read_st_modules(modules_path);
  std::size_t dense_modules = 0;
  for (const StModule& m : modules.modules) {
    if (m.type.ends_with(".Dense") || m.type == "Dense") ++dense_modules;
  }
  const StModule* dense = modules.find("Dense");
  if (dense == nullptr) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: a PyLate ColBERT's modules need a Dense module (its projection)",
                            modules_path.string()));
  }
  if (dense_modules > 1) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: {} Dense modules; Warden runs ColBERT models with one projection",
                            modules_path.string(), dense_modules));
  }
  model.colbert = parse_pylate_config(text, st_config.string());
  model.multi_vector = read_dense_module_head(dir / dense->path, hidden, isa);
}

}  // namespace

ModelKind EncoderModel::kind() const noexcept {
  if (!head) return scores_with_lm_head ? ModelKind::Reranker : ModelKind::Embedding;
  return head->labels() == 1 ? ModelKind::Reranker : ModelKind::Classifier;
}

std::size_t EncoderModel::max_input_tokens(std::optional<std::size_t> tokenizer_max) const noexcept {
  const EncoderDims& d = encoder.dims();
  const std::size_t positions = d.max_positions - d.position_offset;
  std::size_t n = max_seq_length ? *max_seq_length : tokenizer_max.value_or(positions);
  if (n == 0 || n > positions) n = positions;
  return n;
}

void override_pooling(EncoderModel& model, std::string_view pooling, Isa isa, Precision precision) {
  // A yes/no reranker's folder pooled explicitly is served as an embedder instead.
  model.scores_with_lm_head = false;
  if (model.head) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} is a classifier: --pooling applies to embedding models", model.dir.string()));
  }
  if (pooling == "splade") {
    const ArchitectureName& arch = find_architecture(model.config, model.dir);
    // A masked-LM repo names its class; a bare one cannot have the head.
    model.splade = read_splade_head(*model.weights, arch.name, model.weight_prefix, model.config,
                                    model.encoder.dims(), isa, precision, model.dir);
    model.lexical.reset();
    model.multi_vector.reset();
    model.colbert.reset();
    return;
  }
  model.splade.reset();
  if (pooling == "cls") {
    model.pooling.mode = PoolingMode::Cls;
  } else if (pooling == "mean") {
    model.pooling.mode = PoolingMode::Mean;
  } else if (pooling == "max") {
    model.pooling.mode = PoolingMode::Max;
  } else if (pooling == "lasttoken" || pooling == "last-token") {
    model.pooling.mode = PoolingMode::LastToken;
  } else {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("unknown pooling '{}'; choose cls, mean, max, lasttoken or splade", pooling));
  }
}

bool is_yes_no_reranker(const ModelConfig& config, const std::filesystem::path& dir) {
  if (find_architecture(config, dir).architecture != Architecture::Qwen3) return false;
  const auto modules_path = dir / "modules.json";
  return !std::filesystem::exists(modules_path) || read_st_modules(modules_path).find("Pooling") == nullptr;
}

std::string architecture_name(const ModelConfig& config, const std::filesystem::path& dir) {
  return std::string(find_architecture(config, dir).name);
}

std::string supported_architectures() {
  std::string out;
  for (const auto& a : kArchitectures) {
    if (!out.empty()) out += ", ";
    out += a.name;
  }
  return out;
}

std::unique_ptr<EncoderModel> load_encoder_model(const std::filesystem::path& dir, ThreadPool* pool, Isa isa,
                                                 Precision precision) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error(ErrorKind::NotFound, fmt::format("model folder {} does not exist", dir.string()));
  }
  ModelConfig config = read_model_config(dir / "config.json");
  const ArchitectureName& arch = find_architecture(config, dir);
  const bool jina = arch.architecture == Architecture::JinaBert;
  const bool gte = arch.architecture == Architecture::Gte;
  if (config.position_embedding_type != "absolute" && !(jina && config.position_embedding_type == "alibi") &&
      !(gte && config.position_embedding_type == "rope")) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: position_embedding_type '{}' is not supported ({})",
                            (dir / "config.json").string(), config.position_embedding_type,
                            jina  ? "absolute or alibi"
                            : gte ? "absolute or rope"
                                  : "absolute only; alibi with the JinaBert architectures, rope with GTE's"));
  }

  EncoderDims dims;
  dims.hidden = config.hidden_size;
  dims.layers = config.num_hidden_layers;
  dims.heads = config.num_attention_heads;
  dims.intermediate = config.intermediate_size;
  dims.vocab = config.vocab_size;
  dims.max_positions = config.max_position_embeddings;
  dims.type_vocab = arch.architecture == Architecture::DistilBert ? 0 : config.type_vocab_size;
  dims.layer_norm_eps = static_cast<float>(config.layer_norm_eps);
  const bool nomic = arch.architecture == Architecture::NomicBert;
  if (!nomic) {
    const bool modernbert = arch.architecture == Architecture::ModernBert;
    dims.ffn_activation =
        activation_named(config.hidden_act, modernbert ? "hidden_activation" : "hidden_act", dir);
  }
  RelativeSpec relative;
  LayerBiases biases;
  if (nomic) {
    // NomicBertBlock: SwiGLU (fc11(x) · silu(fc12(x))) or GEGLU (exact GELU), or NomicBertMLP's
    // plain fc1-GELU-fc2; biases as the config says (nomic-embed-text has none).
    const std::string& act = config.hidden_act;
    if (act == "swiglu" || act == "geglu") {
      dims.gated_ffn = true;
      dims.ffn_activation = act == "swiglu" ? kernels::Activation::Silu : kernels::Activation::Gelu;
    } else if (act == "gelu") {
      dims.ffn_activation = kernels::Activation::Gelu;
    } else {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: activation_function '{}' is not supported (swiglu, geglu, gelu)",
                              (dir / "config.json").string(), act));
    }
    biases = {config.nomic.qkv_proj_bias, config.nomic.mlp_fc1_bias, config.nomic.mlp_fc2_bias};
    // NomicBertAttention: rotary_emb_dim = head_dim · rotary_emb_fraction; without rotary,
    // NomicBertEmbeddings has an absolute position table of n_positions rows.
    const double rotated = static_cast<double>(config.head_dim()) * config.rotary.fraction;
    if (rotated != std::floor(rotated) || static_cast<std::size_t>(rotated) % 2 != 0) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: rotary_emb_fraction {} of the head size {} is not an even number of dimensions",
                      (dir / "config.json").string(), config.rotary.fraction, config.head_dim()));
    }
    dims.rotary_dims = static_cast<std::size_t>(rotated);
    dims.position_embeddings = dims.rotary_dims == 0;
    dims.rotary_base = config.rotary.base;
    dims.rotary_interleaved = config.rotary.interleaved;
    dims.rotary_ntk_factor = config.rotary.scaling_factor;
    dims.rotary_max_trained = config.rotary.max_trained_positions;
  }
  if (arch.architecture == Architecture::DebertaV2) {
    const ModelConfig::Deberta& db = config.deberta;
    dims.position_embeddings = db.position_biased_input;
    dims.c2p = db.c2p;
    dims.p2c = db.p2c;
    if (db.relative_attention && (db.c2p || db.p2c)) {
      // DisentangledSelfAttention: the table has 2·span rows, span = position_buckets when
      // set, else max_relative_positions (which defaults to max_position_embeddings).
      const std::int64_t max_relative = db.max_relative_positions < 1
                                            ? static_cast<std::int64_t>(config.max_position_embeddings)
                                            : db.max_relative_positions;
      const std::int64_t span = db.position_buckets > 0 ? db.position_buckets : max_relative;
      dims.relative_rows = relative_rows(dims.max_positions - 1, span, db.position_buckets, max_relative);
      relative.table_rows = 2 * static_cast<std::size_t>(span);
      relative.norm = db.norm_rel_ebd;
      relative.shared = db.share_att_key;
    }
  }
  if (jina) {
    // JinaBertEmbeddings has a position table only when the positions are absolute; with ALiBi
    // the encoder adds -slope·|i - j| to each head's scores instead (JinaBertEncoder's alibi).
    if (config.position_embedding_type == "alibi") {
      dims.position_embeddings = false;
      dims.alibi_slopes = kernels::alibi_slopes(dims.heads);
    }
    // JinaBertLayer: feed_forward_type ending in "glu" is the gated JinaBertGLUMLP (GEGLU: nn.GELU,
    // exact; ReGLU: ReLU), anything else BERT's intermediate/output pair.
    const std::string& ff = config.feed_forward_type;
    if (ff == "geglu" || ff == "reglu") {
      dims.gated_ffn = true;
      dims.ffn_activation = ff == "geglu" ? kernels::Activation::Gelu : kernels::Activation::Relu;
    } else if (ff != "original") {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: feed_forward_type '{}' is not supported (original, geglu, reglu)",
                              (dir / "config.json").string(), ff));
    }
  }
  if (gte) {
    // NewModel: post-LN layers with a gated MLP (act(gate) · up, no bias on up_gate_proj), rotary
    // positions over the whole head from rope_theta (NewEmbeddings._init_rope), or an absolute
    // table; type_vocab_size 0 means no token-type table.
    dims.gated_ffn = true;
    biases = {true, false, true};
    if (config.position_embedding_type == "rope") {
      dims.position_embeddings = false;
      dims.rotary_dims = config.head_dim();
      dims.rotary_base = config.rotary.base;
      if (config.rotary.fixed_ntk_factor) {
        // NTKScalingRotaryEmbedding (mixed_b None), which applies at every length:
        // inv_freq = 1 / ((θ·f)^(2i/d)) / f^(2/d), float32 tensors and Python floats as upstream.
        const double f = *config.rotary.fixed_ntk_factor;
        const auto d = static_cast<double>(dims.rotary_dims);
        dims.rotary_inv_freq = kernels::rotary_inv_freq(config.rotary.base * f, dims.rotary_dims);
        const auto divisor = static_cast<float>(std::pow(f, 2.0 / d));
        for (float& v : dims.rotary_inv_freq) v /= divisor;
      }
    }
  }
  if (arch.architecture == Architecture::ModernBert) {
    // ModernBertModel: pre-LN layers over tok_embeddings + norm (no position table, no token
    // types); rotary over the whole head (rotate-half), with local_rope_theta on the layers
    // layer_types marks sliding and global_rope_theta on the rest (ModernBertRotaryEmbedding);
    // a window of local_attention / 2 on every layer but each global_attn_every_n_layers-th
    // (ModernBertAttention); ModernBertMLP's act(input) · gate; biases as the flags say.
    const ModelConfig::ModernBert& m = config.modernbert;
    dims.pre_norm = true;
    dims.position_embeddings = false;
    dims.type_vocab = 0;
    dims.gated_ffn = true;
    dims.rotary_dims = config.head_dim();
    dims.rotary_base = m.global_rope_theta;
    dims.local_rotary_base = m.local_rope_theta;
    dims.local_rotary_layers = m.sliding_rope;
    dims.attention_window = m.local_attention / 2;
    dims.windowed_layers.resize(dims.layers);
    for (std::size_t l = 0; l < dims.layers; ++l) dims.windowed_layers[l] = l % m.global_every != 0;
    biases = {m.attention_bias, m.mlp_bias, m.mlp_bias, m.norm_bias};
  }
  if (arch.architecture == Architecture::Qwen3) {
    // Qwen3Model (modeling_qwen3.py): pre-norm decoder layers with RMSNorms, causal attention
    // of num_attention_heads query heads over num_key_value_heads key/value heads of head_dim,
    // q_norm / k_norm on each head before rotary (rotate-half over the whole head, rope_theta),
    // the SwiGLU MLP, no position table, no token types, the final norm.
    const ModelConfig::Qwen3& q = config.qwen3;
    dims.pre_norm = true;
    dims.rms_norm = true;
    dims.qk_norm = true;
    dims.causal = true;
    dims.position_embeddings = false;
    dims.type_vocab = 0;
    dims.gated_ffn = true;
    dims.kv_heads = q.kv_heads;
    dims.head_dim = q.head_dim;
    dims.rotary_dims = q.head_dim;
    dims.rotary_base = config.rotary.base;
    biases = {q.attention_bias, false, false, false};
  }
  if (arch.architecture == Architecture::Roberta || arch.architecture == Architecture::MPNet) {
    // create_position_ids_from_input_ids: positions from padding_idx + 1 over the non-padding
    // tokens. RobertaEmbeddings' padding_idx is pad_token_id; MPNetEmbeddings fixes it at 1.
    const auto padding_idx = arch.architecture == Architecture::MPNet
                                 ? std::uint32_t{1}
                                 : static_cast<std::uint32_t>(config.pad_token_id.value_or(1));
    dims.padding_idx = padding_idx;
    dims.position_offset = std::size_t{padding_idx} + 1;
  }
  if (arch.architecture == Architecture::MPNet) {
    dims.type_vocab = 0;  // MPNetEmbeddings: word + position only
    if (dims.max_positions <= dims.position_offset) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: max_position_embeddings is {}, too small for MPNet's positions, which start at 2",
                      (dir / "config.json").string(), dims.max_positions));
    }
  }

  const LayerNames& names = arch.architecture == Architecture::DistilBert   ? kDistilBertNames
                            : arch.architecture == Architecture::DebertaV2  ? kDebertaNames
                            : arch.architecture == Architecture::MPNet      ? kMpnetNames
                            : arch.architecture == Architecture::ModernBert ? kModernBertNames
                            : arch.architecture == Architecture::Qwen3      ? kQwen3Names
                            : nomic                                         ? kNomicNames
                            : gte            ? (config.gte_packed_qkv ? kGtePackedNames : kGteNames)
                            : dims.gated_ffn ? kJinaBertGatedNames
                                             : kBertNames;
  std::unique_ptr<ModelWeights> weights;
  std::optional<onnx::PooledOutput> graph_pooling;  // an ONNX graph's own sentence_embedding
  LayerNames read_names = names;                    // an ONNX graph's fused attention stacks Q, K, V
  const auto onnx_file = ModelWeights::checkpoint_in(dir) ? std::nullopt : find_onnx_file(dir);
  if (onnx_file) {
    // The exports Warden reduces: the post-LN encoders with absolute or RoBERTa positions.
    const bool reducible = arch.architecture == Architecture::Bert ||
                           arch.architecture == Architecture::Roberta ||
                           arch.architecture == Architecture::DistilBert;
    if (!reducible || jina) {
      throw Error(
          ErrorKind::Unsupported,
          fmt::format("{}: ONNX files of {} are not read yet (BertModel, XLMRobertaModel, RobertaModel, "
                      "DistilBertModel and their *ForSequenceClassification classes are); convert the "
                      "checkpoint to safetensors instead",
                      onnx_file->string(), arch.name));
    }
    // The head's layers under the names the classifier below reads them by.
    const HeadNames head = arch.architecture == Architecture::Bert ? HeadNames{"pooler.dense", "classifier"}
                           : arch.architecture == Architecture::Roberta
                               ? HeadNames{"classifier.dense", "classifier.out_proj"}
                               : HeadNames{"pre_classifier", "classifier"};
    OnnxEncoder onnx =
        open_onnx_encoder(*onnx_file, names, dims.type_vocab, arch.classifier ? &head : nullptr);
    check_onnx_encoder(onnx.graph, dims, *onnx_file);
    if (onnx.graph.classifier) {
      // BertPooler and RobertaClassificationHead use tanh, DistilBERT's head ReLU (as below).
      const std::string want = arch.architecture == Architecture::DistilBert ? "relu" : "tanh";
      if (onnx.graph.classifier->activation != want) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: the graph's classification head uses {}, {}'s uses {}",
                                onnx_file->string(), onnx.graph.classifier->activation, arch.name, want));
      }
    }
    graph_pooling = onnx.graph.pooled;
    if (onnx.stacked_qkv) read_names.k = read_names.v = {};
    weights = std::make_unique<ModelWeights>(std::move(onnx.weights));
  } else {
    weights = std::make_unique<ModelWeights>(ModelWeights::open_dir(dir));
  }
  // Checkpoints saved from the *ForSequenceClassification class prefix the encoder's
  // tensors with the base model's name; base-model checkpoints usually do not.
  const std::string base_prefix =
      arch.architecture == Architecture::Bert || arch.architecture == Architecture::JinaBert ? "bert."
      : arch.architecture == Architecture::Roberta                                           ? "roberta."
      : arch.architecture == Architecture::DebertaV2                                         ? "deberta."
      : arch.architecture == Architecture::MPNet                                             ? "mpnet."
      : arch.architecture == Architecture::NomicBert                                         ? "bert."
      : arch.architecture == Architecture::ModernBert                                        ? "model."
      : arch.architecture == Architecture::Qwen3                                             ? "model."
      : gte                                                                                  ? "new."
                                                                                             : "distilbert.";
  const std::string prefix =
      weights->find(std::string(names.word_embeddings)) != nullptr ? std::string() : base_prefix;
  const WeightReader encoder_reader(*weights, prefix, isa);
  if (jina && weights->find(prefix + "encoder.layer.0.attention.self.layer_norm_q.weight") != nullptr) {
    // jina-bert-v2-qk-post-norm (the code embedders) normalises queries and keys: not run here.
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: this JinaBERT checkpoint has query/key LayerNorms "
                    "(attention.self.layer_norm_q, the qk-post-norm variant), which Warden does not run",
                    weights->source().string()));
  }
  EncoderWeights encoder_weights =
      read_encoder(*weights, prefix, isa, precision, dims, read_names, relative, biases, pool);
  if (arch.architecture == Architecture::MPNet) {
    encoder_weights.distance_bias =
        mpnet_distance_bias(*weights, prefix, dims, config.relative_attention_num_buckets);
  }

  std::optional<ClassifierHead> head;
  if (arch.classifier) {
    const std::size_t labels = config.num_labels();
    const std::size_t h = dims.hidden;
    const WeightReader root(*weights, "", isa);
    ClassifierHead c;
    switch (arch.architecture) {
      case Architecture::Gte:  // NewForSequenceClassification: NewPooler (dense, tanh) and the classifier
        c.dense = encoder_reader.linear("pooler.dense", h, h);
        c.activation = kernels::Activation::Tanh;
        c.out = root.linear("classifier", labels, h);
        break;
      case Architecture::ModernBert: {
        // ModernBertForSequenceClassification: the first token or the mean (classifier_pooling),
        // ModernBertPredictionHead (dense with classifier_bias, classifier_activation, norm),
        // then the classifier, which always has a bias.
        const ModelConfig::ModernBert& m = config.modernbert;
        c.pooling = m.classifier_pooling == "mean" ? PoolingMode::Mean : PoolingMode::Cls;
        c.dense = root.linear("head.dense", h, h, m.classifier_bias);
        c.activation = activation_named(m.classifier_activation, "classifier_activation", dir);
        c.norm = root.layer_norm("head.norm", h, m.norm_bias);
        c.norm_eps = dims.layer_norm_eps;
        c.out = root.linear("classifier", labels, h);
        break;
      }
      case Architecture::NomicBert:  // no classifier class is listed for these (kArchitectures)
      case Architecture::Qwen3:
        throw Error(ErrorKind::Internal, "this architecture has no classification head here");
      case Architecture::Bert:
      case Architecture::JinaBert:  // JinaBertForSequenceClassification: the same pooler and classifier
        c.dense = encoder_reader.linear("pooler.dense", h, h);
        c.activation = kernels::Activation::Tanh;
        c.out = root.linear("classifier", labels, h);
        break;
      case Architecture::Roberta:
      case Architecture::MPNet:  // MPNetClassificationHead: the same dense-tanh-out_proj on <s>
        c.dense = root.linear("classifier.dense", h, h);
        c.activation = kernels::Activation::Tanh;
        c.out = root.linear("classifier.out_proj", labels, h);
        break;
      case Architecture::DebertaV2:
        // ContextPooler: dense and pooler_hidden_act on the first token, then the classifier.
        c.dense = root.linear("pooler.dense", h, h);
        c.activation = activation_named(config.deberta.pooler_hidden_act, "pooler_hidden_act", dir);
        c.out = root.linear("classifier", labels, h);
        break;
      case Architecture::DistilBert:
        c.dense = root.linear("pre_classifier", h, h);
        c.activation = kernels::Activation::Relu;
        c.out = root.linear("classifier", labels, h);
        break;
    }
    head = std::move(c);
  }

  auto model = std::make_unique<EncoderModel>(EncoderModel{dir,
                                                           std::move(config),
                                                           arch.architecture,
                                                           std::move(weights),
                                                           prefix,
                                                           Encoder(dims, std::move(encoder_weights)),
                                                           std::move(head),
                                                           {},
                                                           {},
                                                           std::nullopt,
                                                           std::nullopt,
                                                           std::nullopt,
                                                           std::nullopt,
                                                           std::nullopt});
  const auto modules_path = dir / "modules.json";
  if (std::filesystem::exists(modules_path)) {
    const StModules modules = read_st_modules(modules_path);
    if (const StModule* p = modules.find("Pooling"); p != nullptr) {
      model->pooling = read_pooling_config(dir / p->path / "config.json");
    }
  }
  model->scores_with_lm_head = is_yes_no_reranker(model->config, dir);
  if (graph_pooling) {
    // The graph's own pooling is what its users get (optimum's sentence_embedding): it wins over
    // the folder's 1_Pooling/config.json. (Normalisation is the request's, as for any model.)
    model->pooling.mode = graph_pooling->mode == "mean" ? PoolingMode::Mean : PoolingMode::Cls;
    model->pooling.word_embedding_dimension = dims.hidden;
  }
  if (std::filesystem::exists(dir / "config_sentence_transformers.json")) {
    model->st = read_st_config(dir / "config_sentence_transformers.json");
  }
  if (std::filesystem::exists(dir / "sentence_bert_config.json")) {
    model->max_seq_length = read_max_seq_length(dir / "sentence_bert_config.json");
  }
  if (!model->head) {  // an embedder's retrieval heads; a classifier has its own head
    read_colbert(*model, arch.name, isa);
    if (!model->colbert) {
      model->lexical = read_lexical_head(dir, dims.hidden, isa);
      model->multi_vector = read_multi_vector_head(dir, dims.hidden, isa);
    }
  }
  if (std::filesystem::exists(modules_path)) {
    const StModules modules = read_st_modules(modules_path);
    if (const StModule* p = modules.find("SpladePooling"); p != nullptr) {
      model->splade =
          read_splade_head(*model->weights, arch.name, prefix, model->config, dims, isa, precision, dir);
      const SpladePoolingConfig pooling = read_splade_pooling_config(dir / p->path / "config.json");
      model->splade->sum = pooling.sum;
      model->splade->log1p_twice = pooling.log1p_twice;
    }
  }
#if defined(__GLIBC__)
  // Converting to bf16/int8 frees megabytes of temporaries that glibc keeps in its heaps
  // (its mmap threshold rises after the first large free); give them back, so that resident
  // memory is the model's.
  ::malloc_trim(0);
#endif
  return model;
}

}  // namespace warden::model

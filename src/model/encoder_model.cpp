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
#include "model/engine/encoder_reader.hpp"
#include "model/engine/weight_reader.hpp"
#include "model/families/common.hpp"
#include "model/families/registry.hpp"
#include "model/onnx/onnx_encoder.hpp"

namespace warden::model {

namespace {

using families::ClassRole;
using families::Family;
using families::FamilyClass;

constexpr std::string_view kAbsoluteOnly[] = {"absolute"};

// The MLM head of a *ForMaskedLM checkpoint, as transformers builds it (its family names the
// tensors): a transform (dense, activation, LayerNorm) and a decoder whose weight is tied to the
// word embeddings (safetensors keep one copy: the decoder's own weight only when it was saved)
// plus its bias.
heads::SpladeHead read_splade_head(const formats::ModelWeights& weights,
                                   const families::ResolvedClass& resolved, const std::string& prefix,
                                   const metadata::ModelConfig& config, const engine::EncoderDims& dims,
                                   Isa isa, Precision precision, const std::filesystem::path& dir) {
  const families::MlmHeadNames* n =
      resolved.cls->role == ClassRole::MaskedLm ? resolved.family->mlm_head : nullptr;
  if (n == nullptr) {
    const std::string readable = families::class_names([](const Family& f, const FamilyClass& c) {
      return f.mlm_head != nullptr && c.role == ClassRole::MaskedLm;
    });
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: SPLADE pooling needs the MLM head of one of {}; '{}' has none Warden reads",
                            dir.string(), readable, resolved.cls->name));
  }
  const std::size_t h = dims.hidden;
  const std::size_t vocab = dims.vocab;
  const engine::WeightReader root(weights, "", isa);
  heads::SpladeHead head;
  head.transform = root.linear(n->transform, h, h);
  head.activation = n->exact_gelu ? kernels::Activation::Gelu
                                  : families::activation_named(config.hidden_act, "hidden_act", dir);
  head.norm = root.layer_norm(n->norm, h);
  head.norm_eps = n->fixed_norm_eps.value_or(dims.layer_norm_eps);
  const std::string decoder_weight = std::string(n->decoder) + ".weight";
  const bool untied = weights.find(decoder_weight) != nullptr;
  head.decoder = engine::WeightReader(weights, "", isa, precision)
                     .dense({untied ? n->decoder : std::string_view(prefix + "embeddings.word_embeddings")},
                            vocab, h, false);
  head.bias = root.floats(weights.find(n->bias) != nullptr ? n->bias : n->tied_bias, {vocab});
  return head;
}

// A ColBERT folder's projection and query/document settings: Stanford's HF_ColBERT checkpoint
// (linear.weight beside the encoder, artifact.metadata), or a PyLate folder (its
// config_sentence_transformers.json has query_prefix; modules.json's Dense module projects).
// Anything else is left as it is.
void read_colbert(EncoderModel& model, ClassRole role, Isa isa) {
  const std::filesystem::path& dir = model.dir;
  const std::size_t hidden = model.encoder.dims().hidden;
  if (role == ClassRole::StanfordColbert) {
    const auto metadata = dir / "artifact.metadata";
    model.colbert = heads::parse_colbert_metadata(
        std::filesystem::exists(metadata) ? read_file(metadata) : std::string(), metadata.string());
    model.multi_vector = heads::read_stanford_colbert_head(*model.weights, hidden, isa);
    return;
  }
  const auto st_config = dir / "config_sentence_transformers.json";
  if (!std::filesystem::exists(st_config)) return;
  const std::string text = read_file(st_config);
  if (!heads::is_pylate_config(text, st_config.string())) return;
  const auto modules_path = dir / "modules.json";
  if (!std::filesystem::exists(modules_path)) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: a PyLate ColBERT folder needs modules.json naming its Dense module", dir.string()));
  }
  const metadata::StModules modules = metadata::read_st_modules(modules_path);
  std::size_t dense_modules = 0;
  for (const metadata::StModule& m : modules.modules) {
    if (m.kind() == "Dense") ++dense_modules;
  }
  const metadata::StModule* dense = modules.find("Dense");
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
  model.colbert = heads::parse_pylate_config(text, st_config.string());
  model.multi_vector = heads::read_dense_module_head(dir / dense->path, hidden, isa);
}

}  // namespace

ModelKind EncoderModel::kind() const noexcept {
  if (!head) return scores_with_lm_head ? ModelKind::Reranker : ModelKind::Embedding;
  return head->labels() == 1 ? ModelKind::Reranker : ModelKind::Classifier;
}

std::size_t EncoderModel::max_input_tokens(std::optional<std::size_t> tokenizer_max) const noexcept {
  const engine::EncoderDims& d = encoder.dims();
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
    // A masked-LM repo names its class; a bare one cannot have the head.
    model.splade =
        read_splade_head(*model.weights, families::resolve(model.config, model.dir), model.weight_prefix,
                         model.config, model.encoder.dims(), isa, precision, model.dir);
    model.lexical.reset();
    model.multi_vector.reset();
    model.colbert.reset();
    return;
  }
  model.splade.reset();
  if (pooling == "cls") {
    model.pooling.mode = metadata::PoolingMode::Cls;
  } else if (pooling == "mean") {
    model.pooling.mode = metadata::PoolingMode::Mean;
  } else if (pooling == "max") {
    model.pooling.mode = metadata::PoolingMode::Max;
  } else if (pooling == "lasttoken" || pooling == "last-token") {
    model.pooling.mode = metadata::PoolingMode::LastToken;
  } else {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("unknown pooling '{}'; choose cls, mean, max, lasttoken or splade", pooling));
  }
}

std::string llm_rerank_template(const metadata::ModelConfig& config, const std::filesystem::path& dir,
                                std::string_view named) {
  const families::ResolvedClass resolved = families::resolve(config, dir);
  if (resolved.cls->role != families::ClassRole::CausalLm) return {};
  const std::string_view chosen = named.empty() ? resolved.family->rerank_template : named;
  if (chosen.empty()) return {};
  const auto modules_path = dir / "modules.json";
  const bool pooled = std::filesystem::exists(modules_path) &&
                      metadata::read_st_modules(modules_path).find("Pooling") != nullptr;
  return pooled ? std::string() : std::string(chosen);
}

std::string architecture_name(const metadata::ModelConfig& config, const std::filesystem::path& dir) {
  return std::string(families::resolve(config, dir).cls->name);
}

std::string supported_architectures() {
  return families::supported_architectures();
}

namespace {

// The shared encoder's plan for a config: the common dimensions, BERT's tensor names and
// biases, then whatever the family changes.
families::EncoderPlan plan_encoder(const metadata::ModelConfig& config, const Family& family,
                                   const std::filesystem::path& dir) {
  const std::span<const std::string_view> allowed = family.position_types.empty()
                                                        ? std::span<const std::string_view>(kAbsoluteOnly)
                                                        : family.position_types;
  if (std::find(allowed.begin(), allowed.end(), config.position_embedding_type) == allowed.end()) {
    std::string listed;
    for (const std::string_view t : allowed) listed += (listed.empty() ? "" : ", ") + std::string(t);
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: position_embedding_type '{}' is not supported ({} runs {})",
                            families::config_path(dir), config.position_embedding_type, family.name, listed));
  }
  families::EncoderPlan plan;
  plan.names = families::kBertLayerNames;
  engine::EncoderDims& dims = plan.dims;
  dims.hidden = config.hidden_size;
  dims.layers = config.num_hidden_layers;
  dims.heads = config.num_attention_heads;
  dims.intermediate = config.intermediate_size;
  dims.vocab = config.vocab_size;
  dims.max_positions = config.max_position_embeddings;
  dims.type_vocab = config.type_vocab_size;
  dims.layer_norm_eps = static_cast<float>(config.layer_norm_eps);
  if (!family.activation_key.empty()) {
    dims.ffn_activation = families::activation_named(config.hidden_act, family.activation_key, dir);
  }
  if (family.plan != nullptr) family.plan(config, plan, dir);
  return plan;
}

}  // namespace

std::unique_ptr<EncoderModel> load_encoder_model(const std::filesystem::path& dir, ThreadPool* pool, Isa isa,
                                                 Precision precision) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error(ErrorKind::NotFound, fmt::format("model folder {} does not exist", dir.string()));
  }
  metadata::ModelConfig config = families::read_model_config(dir / "config.json");
  const families::ResolvedClass resolved = families::resolve(config, dir);
  const Family& family = *resolved.family;
  const bool classifier = resolved.cls->role == ClassRole::Classifier;
  families::EncoderPlan plan = plan_encoder(config, family, dir);
  const engine::EncoderDims& dims = plan.dims;

  std::unique_ptr<formats::ModelWeights> weights;
  std::optional<model::onnx::PooledOutput> graph_pooling;  // an ONNX graph's own sentence_embedding
  engine::LayerNames read_names = plan.names;              // an ONNX graph's fused attention stacks Q, K, V
  const auto onnx_file =
      formats::ModelWeights::checkpoint_in(dir) ? std::nullopt : model::onnx::find_onnx_file(dir);
  if (onnx_file) {
    // The exports Warden reduces: the post-LN encoders with absolute or RoBERTa positions.
    if (family.onnx == nullptr) {
      const std::string readable = families::class_names([](const Family& f, const FamilyClass& c) {
        return f.onnx != nullptr && (c.role == ClassRole::Encoder || c.role == ClassRole::Classifier);
      });
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: ONNX files of {} are not read yet ({} are); convert the checkpoint to "
                              "safetensors instead",
                              onnx_file->string(), resolved.cls->name, readable));
    }
    // The head's layers under the names the classifier below reads them by.
    model::onnx::OnnxEncoder onnx = model::onnx::open_onnx_encoder(*onnx_file, plan.names, dims.type_vocab,
                                                                   classifier ? &family.onnx->head : nullptr);
    model::onnx::check_onnx_encoder(onnx.graph, dims, *onnx_file);
    if (onnx.graph.classifier && onnx.graph.classifier->activation != family.onnx->head_activation) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: the graph's classification head uses {}, {}'s uses {}", onnx_file->string(),
                      onnx.graph.classifier->activation, resolved.cls->name, family.onnx->head_activation));
    }
    graph_pooling = onnx.graph.pooled;
    if (onnx.stacked_qkv) read_names.k = read_names.v = {};
    weights = std::make_unique<formats::ModelWeights>(std::move(onnx.weights));
  } else {
    weights = std::make_unique<formats::ModelWeights>(formats::ModelWeights::open_dir(dir));
  }
  if (family.adapt_weights != nullptr) family.adapt_weights(*weights);
  // Checkpoints saved from the *ForSequenceClassification class prefix the encoder's
  // tensors with the base model's name; base-model checkpoints usually do not.
  const std::string prefix = weights->find(std::string(plan.names.word_embeddings)) != nullptr
                                 ? std::string()
                                 : std::string(family.weight_prefix);
  const engine::WeightReader encoder_reader(*weights, prefix, isa);
  engine::EncoderWeights encoder_weights = engine::read_encoder(*weights, prefix, isa, precision, dims,
                                                                read_names, plan.relative, plan.biases, pool);
  if (family.finish != nullptr) family.finish({*weights, prefix, config, dims}, encoder_weights);

  std::optional<heads::ClassifierHead> head;
  if (classifier) {
    if (family.classifier == nullptr) {
      throw Error(ErrorKind::Internal, fmt::format("{} has no classification head here", resolved.cls->name));
    }
    const engine::WeightReader root(*weights, "", isa);
    head = family.classifier({encoder_reader, root, config, dims, dir});
  }

  auto model = std::make_unique<EncoderModel>(EncoderModel{dir,
                                                           std::move(config),
                                                           &family,
                                                           std::move(weights),
                                                           prefix,
                                                           engine::Encoder(dims, std::move(encoder_weights)),
                                                           std::move(head),
                                                           {},
                                                           {},
                                                           {},
                                                           std::nullopt,
                                                           std::nullopt,
                                                           std::nullopt,
                                                           std::nullopt,
                                                           std::nullopt});
  // modules.json, read once for the Pooling, the Dense modules and SPLADE's modules (empty: none).
  const auto modules_path = dir / "modules.json";
  const metadata::StModules modules =
      std::filesystem::exists(modules_path) ? metadata::read_st_modules(modules_path) : metadata::StModules{};
  if (const metadata::StModule* p = modules.find("Pooling"); p != nullptr) {
    model->pooling = metadata::read_pooling_config(dir / p->path / "config.json");
  }
  model->scores_with_lm_head = !llm_rerank_template(model->config, dir).empty();
  if (graph_pooling) {
    // The graph's own pooling is what its users get (optimum's sentence_embedding): it wins over
    // the folder's 1_Pooling/config.json. (Normalisation is the request's, as for any model.)
    model->pooling.mode =
        graph_pooling->mode == "mean" ? metadata::PoolingMode::Mean : metadata::PoolingMode::Cls;
    model->pooling.word_embedding_dimension = dims.hidden;
  }
  if (std::filesystem::exists(dir / "config_sentence_transformers.json")) {
    model->st = metadata::read_st_config(dir / "config_sentence_transformers.json");
  }
  if (std::filesystem::exists(dir / "sentence_bert_config.json")) {
    model->max_seq_length = metadata::read_max_seq_length(dir / "sentence_bert_config.json");
  }
  if (!model->head) {  // an embedder's retrieval heads; a classifier has its own head
    read_colbert(*model, resolved.cls->role, isa);
    if (!model->colbert) {
      model->lexical = heads::read_lexical_head(dir, dims.hidden, isa);
      model->multi_vector = heads::read_multi_vector_head(dir, dims.hidden, isa);
      model->pooled_dense = heads::read_pooled_dense_modules(dir, modules, dims.hidden, isa);
    }
  }
  if (const metadata::StModule* p = modules.find("SpladePooling"); p != nullptr) {
    model->splade =
        read_splade_head(*model->weights, resolved, prefix, model->config, dims, isa, precision, dir);
    const metadata::SpladePoolingConfig pooling =
        metadata::read_splade_pooling_config(dir / p->path / "config.json");
    model->splade->sum = pooling.sum;
    model->splade->log1p_twice = pooling.log1p_twice;
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

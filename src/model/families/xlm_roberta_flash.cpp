// jina-embeddings-v3 (the remote code of jinaai/xlm-roberta-flash-implementation, which its
// config names in auto_map as XLMRobertaFlashConfig while calling the model XLMRobertaModel):
// XLM-R's post-LN layers under their flash-attention names (mixer.Wqkv holding Q, K and V,
// mixer.out_proj, norm1, mlp.fc1, mlp.fc2, norm2; the embeddings' LayerNorm is emb_ln), rotary
// positions over whole heads (rotate-half, rotary_emb_base) without a position table, and task
// adapters: XLMRobertaLoRA registers a LoRAParametrization on every nn.Linear and nn.Embedding, so
// the checkpoint keeps each weight as "<module>.parametrizations.weight.original" beside its
// ".0.lora_A" and ".0.lora_B" ([tasks, rank, in] and [tasks, out, rank] for a Linear; [tasks,
// vocab, rank] and [tasks, rank, hidden] for an Embedding), and a sequence encoded for task t runs
// W + (alpha / rank) · B_t·A_t (modeling_lora.py's lora_forward). No task: the base weights.
// jina-reranker-v2 shares the code: the same layers with absolute positions and a classifier.

#include <fmt/format.h>

#include "model/engine/lora.hpp"
#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    {"XLMRobertaModel", ClassRole::Encoder},
    {"XLMRobertaLoRA", ClassRole::Encoder},
    // jina-reranker-v2-base-multilingual: the backbone without a pooler, absolute positions, and
    // XLMRobertaClassificationHead (dense, tanh, out_proj on <s>), as RoBERTa's.
    {"XLMRobertaForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kRemoteConfigs[] = {"XLMRobertaFlashConfig"};
constexpr std::string_view kPositionTypes[] = {"rotary", "absolute"};

// Block (prenorm=False): mixer (MHA: Wqkv, out_proj), norm1, mlp (Mlp: fc1, fc2), norm2.
constexpr engine::LayerNames kNames{"encoder.layers.", "mixer.Wqkv", "",        "",
                                    "mixer.out_proj",  "norm1",      "mlp.fc1", "mlp.fc2",
                                    "norm2",           "",           "",        "emb_ln"};

// torch.nn.utils.parametrize keeps a parametrized weight's tensor under this suffix.
constexpr std::string_view kParametrized = ".parametrizations.weight.original";

struct Settings : FamilySettings {
  double rotary_base = 10000.0;
  std::size_t rotary_dims = 0;  // 0: the whole head
  bool rotary_interleaved = false;
  std::size_t lora_rank = 4;
  double lora_alpha = 1.0;
  bool load_trained_adapters = false;
};

// XLMRobertaFlashConfig (configuration_xlm_roberta.py): its defaults where config.json says
// nothing; what XLMRobertaModel asserts (a GELU) and the rotary variants it has that Warden does
// not run are refused by name.
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  read_bert_shape(f, c, 8194);
  c.type_vocab_size = optional_in(f, "type_vocab_size", 0, kMaxTypeVocab, 1);
  c.layer_norm_eps = read_eps(f, "layer_norm_eps", 1e-5);
  c.position_embedding_type = f.string("position_embedding_type").value_or("rotary");
  // XLMRobertaModel rounds the vocabulary up to pad_vocab_size_multiple.
  const std::size_t multiple = optional_in(f, "pad_vocab_size_multiple", 1, 1 << 16, 1);
  c.vocab_size = (c.vocab_size + multiple - 1) / multiple * multiple;
  auto s = std::make_shared<Settings>();
  s->rotary_base = f.number("rotary_emb_base").value_or(10000.0);
  if (!std::isfinite(s->rotary_base) || s->rotary_base <= 1.0)
    throw f.fail("rotary_emb_base", "must be a number above 1");
  s->rotary_dims = optional_in(f, "rotary_emb_dim", 0, kMaxHidden, 0);
  s->rotary_interleaved = f.boolean("rotary_emb_interleaved").value_or(false);
  if (f.has("rotary_emb_scale_base")) {
    throw f.fail("rotary_emb_scale_base", "is set: xPos-scaled rotary embeddings are not supported");
  }
  if (f.boolean("last_layer_subset").value_or(false)) {
    throw f.fail("last_layer_subset", "is true: the pretraining variant is not supported");
  }
  // XLMRobertaLoRA: lora_adaptations names the tasks; task_instructions must give each one its
  // instruction (its constructor refuses anything else).
  if (const auto tasks = f.array("lora_adaptations")) {
    for (const auto t : *tasks) {
      std::string_view name;
      if (t.get_string().get(name) != simdjson::SUCCESS || name.empty()) {
        throw f.fail("lora_adaptations", "must hold task names");
      }
      for (const auto& known : c.task_adapters) {
        if (known.name == name) throw f.fail("lora_adaptations", fmt::format("names \"{}\" twice", name));
      }
      c.task_adapters.push_back({std::string(name), {}});
    }
    if (c.task_adapters.empty()) throw f.fail("lora_adaptations", "must name at least one task");
    const auto instructions = f.object("task_instructions");
    if (!instructions)
      throw f.fail("task_instructions", "is missing: it must give each task its instruction");
    const formats::json_fields::Fields in(*instructions, f.source());
    std::size_t given = 0;
    for (auto& task : c.task_adapters) {
      const auto text = in.string(task.name);
      if (!text) throw f.fail("task_instructions", fmt::format("has no instruction for \"{}\"", task.name));
      task.instruction = *text;
    }
    for ([[maybe_unused]] const auto field : *instructions) ++given;
    if (given != c.task_adapters.size()) {
      throw f.fail("task_instructions", "names a task lora_adaptations does not");
    }
    s->lora_rank = optional_in(f, "lora_rank", 1, 1 << 12, 4);
    s->lora_alpha = f.number("lora_alpha").value_or(1.0);
    if (!std::isfinite(s->lora_alpha)) throw f.fail("lora_alpha", "must be a finite number");
    s->load_trained_adapters = f.boolean("load_trained_adapters").value_or(false);
  }
  return s;
}

void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& dir) {
  const auto& s = settings_of<Settings>(config);
  p.names = kNames;
  // create_mlp_cls: the tanh GELU for the approximate names, else the exact one; XLMRobertaModel
  // asserts one of them.
  const std::string& act = config.hidden_act;
  if (act == "gelu") {
    p.dims.ffn_activation = kernels::Activation::Gelu;
  } else if (act == "gelu_new" || act == "gelu_fast" || act == "gelu_pytorch_tanh") {
    p.dims.ffn_activation = kernels::Activation::GeluTanh;
  } else {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: hidden_act '{}' is not one XLMRobertaModel runs (gelu, gelu_new, gelu_fast, "
                            "gelu_pytorch_tanh)",
                            config_path(dir), act));
  }
  if (config.position_embedding_type == "absolute") {
    // XLMRobertaEmbeddings: create_position_ids_from_input_ids, as XLM-R.
    count_positions_after_padding(p, static_cast<std::uint32_t>(config.pad_token_id.value_or(1)));
    return;
  }
  // create_mixer_cls: rotary_emb_dim (default the head size) of each head, rotary_emb_base;
  // the unpadded sequences' positions start at 0.
  const std::size_t rotated = s.rotary_dims == 0 ? config.head_dim() : s.rotary_dims;
  if (rotated > config.head_dim() || rotated % 2 != 0) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: rotary_emb_dim {} is not an even number of at most the head size {}",
                            config_path(dir), rotated, config.head_dim()));
  }
  p.dims.position_embeddings = false;
  p.dims.rotary_dims = rotated;
  p.dims.rotary_base = s.rotary_base;
  p.dims.rotary_interleaved = s.rotary_interleaved;
}

// Every "X.parametrizations.weight.original" answers to "X.weight" too, so that the shared
// reader finds the base weights where an unparametrized checkpoint keeps them.
void adapt_weights(formats::ModelWeights& weights) {
  for (const std::string_view name : weights.names()) {
    if (name.size() <= kParametrized.size() || !name.ends_with(kParametrized)) continue;
    const std::string base = std::string(name.substr(0, name.size() - kParametrized.size())) + ".weight";
    if (weights.find(base) == nullptr) weights.alias(base, name);
  }
}

// The adapters of the parametrized module `module` (under the encoder's prefix): its lora_A and
// lora_B, of the shapes its kind has (modeling_lora.py's LoRAParametrization).
std::pair<std::vector<float>, std::vector<float>> read_adapters(const FinishSource& src,
                                                                const std::string& module,
                                                                std::initializer_list<std::size_t> a_shape,
                                                                std::initializer_list<std::size_t> b_shape) {
  const std::string base = src.prefix + module + ".parametrizations.weight.0.";
  return {formats::to_float32(src.weights.require(base + "lora_A", a_shape)),
          formats::to_float32(src.weights.require(base + "lora_B", b_shape))};
}

// A Linear's: [tasks x rank x in] and [tasks x out x rank].
engine::LoraLinear read_linear(const FinishSource& src, const std::string& module, std::size_t tasks,
                               std::size_t rank, std::size_t out, std::size_t in, float scale) {
  const auto [a, b] = read_adapters(src, module, {tasks, rank, in}, {tasks, out, rank});
  return engine::make_lora_linear(a, b, tasks, rank, in, out, scale);
}

// An Embedding's (fan_in is the vocabulary): [tasks x rows x rank] and [tasks x rank x width].
engine::LoraTable read_table(const FinishSource& src, const std::string& module, std::size_t tasks,
                             std::size_t rank, std::size_t rows, std::size_t width, float scale) {
  const auto [a, b] = read_adapters(src, module, {tasks, rows, rank}, {tasks, rank, width});
  return engine::make_lora_table(a, b, tasks, rank, rows, width, scale);
}

// The task adapters: as many tasks as lora_adaptations names; their matrices when the checkpoint
// holds trained ones (load_trained_adapters), else none: XLMRobertaLoRA then makes fresh
// adapters whose product is zero (lora_B, or an embedding's lora_A, starts at zeros), which is the
// base weights.
void finish(const FinishSource& src, engine::EncoderWeights& w) {
  const metadata::ModelConfig& c = src.config;
  const auto& s = settings_of<Settings>(c);
  const std::size_t tasks = c.task_adapters.size();
  w.adapters = tasks;
  if (tasks == 0 || !s.load_trained_adapters) return;
  const engine::EncoderDims& d = src.dims;
  const std::size_t h = d.hidden;
  const std::size_t r = s.lora_rank;
  const auto scale = static_cast<float>(s.lora_alpha / static_cast<double>(r));
  w.word_lora = read_table(src, "embeddings.word_embeddings", tasks, r, d.vocab, h, scale);
  if (d.type_vocab > 0)
    w.type_lora = read_table(src, "embeddings.token_type_embeddings", tasks, r, d.type_vocab, h, scale);
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const std::string layer = fmt::format("encoder.layers.{}.", l);
    engine::EncoderLayer& L = w.layers[l];
    L.qkv_lora = read_linear(src, layer + "mixer.Wqkv", tasks, r, 3 * h, h, scale);
    L.attn_out_lora = read_linear(src, layer + "mixer.out_proj", tasks, r, h, h, scale);
    L.ffn_in_lora = read_linear(src, layer + "mlp.fc1", tasks, r, d.intermediate, h, scale);
    L.ffn_out_lora = read_linear(src, layer + "mlp.fc2", tasks, r, h, d.intermediate, scale);
  }
}

}  // namespace

extern const Family kXlmRobertaFlashFamily;
const Family kXlmRobertaFlashFamily{
    .name = "xlm-roberta-flash",
    .classes = kClasses,
    .model_types = {},  // "xlm-roberta" is stock XLM-R's (roberta.cpp) unless auto_map says otherwise
    .remote_configs = kRemoteConfigs,
    .read_config = read_config,
    .position_types = kPositionTypes,
    .activation_key = "",
    .plan = plan,
    .weight_prefix = "roberta.",
    .adapt_weights = adapt_weights,
    .finish = finish,
    .classifier = roberta_classifier,
    .default_pad_token_id = 1,
};

}  // namespace warden::model::families

// NomicBERT (nomic-ai/nomic-bert-2048's remote code; nomic-embed-text-v1/v1.5): a GPT2Config's
// key names, stacked Wqkv, rotary positions over a fraction of each head (with dynamic NTK
// scaling past the trained length), and a SwiGLU, GEGLU or plain MLP with configurable biases;
// and nomic-embed-text-v2-moe, whose every moe_every_n_layers-th layer (the odd ones for 2) routes
// each token through moe_top_k of num_experts expert MLPs (model/engine/moe_ffn.hpp).

#include <cmath>

#include <fmt/format.h>

#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {{"NomicBertModel", ClassRole::Encoder}};
constexpr std::string_view kModelTypes[] = {"nomic_bert"};

// NomicBertBlock: attn.Wqkv (Q, K, V stacked), attn.out_proj, norm1; the gated MLP's fc11
// (multiplied) and fc12 (through the activation: fc11(x) · act(fc12(x))), or fc1 for the plain
// MLP; fc2; norm2. The embeddings' LayerNorm is NomicBertModel.emb_ln.
constexpr engine::LayerNames kNames{"encoder.layers.", "attn.Wqkv", "",         "",
                                    "attn.out_proj",   "norm1",     "mlp.fc1",  "mlp.fc2",
                                    "norm2",           "mlp.fc12",  "mlp.fc11", "emb_ln"};

struct Settings : FamilySettings {
  bool qkv_proj_bias = true;  // Wqkv and out_proj
  bool mlp_fc1_bias = true;   // fc11/fc12 (or fc1)
  bool mlp_fc2_bias = true;
  double rotary_base = 10000.0;
  double rotary_fraction = 0.0;  // of each head rotated (0: none, an absolute table instead)
  bool rotary_interleaved = false;
  // Dynamic NTK scaling, which raises the base for a sequence longer than max_trained_positions.
  std::optional<double> rotary_scaling_factor;
  std::size_t max_trained_positions = 2048;
  // Mixture of experts (0 experts: none): which layers, how many experts, how many per token.
  std::size_t moe_every_n_layers = 0;
  std::size_t experts = 0;
  std::size_t moe_top_k = 0;
};

// NomicBertConfig (configuration_hf_nomic_bert.py), a GPT2Config: GPT-2's key names and
// defaults where the file says nothing. NomicBertModel pads the vocabulary to
// pad_vocab_size_multiple, and its gated MLP rounds n_inner (default 8/3 of the width) up to a
// multiple of 256 (NomciBertGatedMLP's multiple_of); what it builds is what the weights have, so
// those are the sizes read here. Variants Warden does not run are refused by name.
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  c.hidden_size = optional_in(f, "n_embd", 1, kMaxHidden, 768);
  c.num_hidden_layers = optional_in(f, "n_layer", 1, kMaxLayers, 12);
  c.num_attention_heads = optional_in(f, "n_head", 1, kMaxHidden, 12);
  c.max_position_embeddings = optional_in(f, "n_positions", 1, kMaxPositions, 1024);
  c.type_vocab_size = optional_in(f, "type_vocab_size", 0, kMaxTypeVocab, 2);
  c.hidden_act = f.string("activation_function").value_or("gelu_new");
  c.layer_norm_eps = read_eps(f, "layer_norm_epsilon", 1e-5);
  const bool gated = c.hidden_act == "swiglu" || c.hidden_act == "geglu" || c.hidden_act == "glu";
  std::size_t inner = 0;
  if (f.has("n_inner") && f.integer("n_inner")) {
    inner = static_cast<std::size_t>(f.integer_in("n_inner", 1, kMaxIntermediate));
  } else {
    inner = gated ? c.hidden_size * 8 / 3 : 4 * c.hidden_size;
  }
  if (gated) inner = (inner + 255) / 256 * 256;
  c.intermediate_size = inner;
  const std::size_t vocab = optional_in(f, "vocab_size", 1, kMaxVocab, 50257);
  const std::size_t multiple = optional_in(f, "pad_vocab_size_multiple", 1, 1 << 16, 1);
  c.vocab_size = (vocab + multiple - 1) / multiple * multiple;
  auto s = std::make_shared<Settings>();
  s->qkv_proj_bias = f.boolean("qkv_proj_bias").value_or(true);
  s->mlp_fc1_bias = f.boolean("mlp_fc1_bias").value_or(true);
  s->mlp_fc2_bias = f.boolean("mlp_fc2_bias").value_or(true);
  s->rotary_base = f.number("rotary_emb_base").value_or(10000.0);
  s->rotary_fraction = f.number("rotary_emb_fraction").value_or(0.0);
  s->rotary_interleaved = f.boolean("rotary_emb_interleaved").value_or(false);
  s->rotary_scaling_factor = f.number("rotary_scaling_factor");
  s->max_trained_positions = optional_in(f, "max_trained_positions", 1, kMaxPositions, 2048);
  if (!std::isfinite(s->rotary_base) || s->rotary_base <= 1.0)
    throw f.fail("rotary_emb_base", "must be a number above 1");
  if (!std::isfinite(s->rotary_fraction) || s->rotary_fraction < 0.0 || s->rotary_fraction > 1.0) {
    throw f.fail("rotary_emb_fraction", "must be in [0, 1]");
  }
  if (s->rotary_scaling_factor &&
      (!std::isfinite(*s->rotary_scaling_factor) || *s->rotary_scaling_factor < 1.0)) {
    throw f.fail("rotary_scaling_factor", "must be null or a number of at least 1");
  }
  for (const char* key : {"prenorm", "parallel_block", "use_rms_norm", "causal"}) {
    if (f.boolean(key).value_or(false)) throw f.fail(key, "is true: that NomicBERT variant is not supported");
  }
  if (f.number("rotary_emb_scale_base")) {
    throw f.fail("rotary_emb_scale_base", "is set: xPos-scaled rotary embeddings are not supported");
  }
  // nomic-embed-text-v2-moe (NomicMoELayer, as vLLM's bert_with_rope.py and contrastors' MoEBlock
  // run it): a softmax router whose top-k probabilities weight the experts as they are, experts
  // without biases, no shared experts. The variants its training code knows beyond that are refused.
  s->moe_every_n_layers = optional_in(f, "moe_every_n_layers", 0, kMaxLayers, 0);
  if (s->moe_every_n_layers > 0) {
    s->experts = optional_in(f, "num_experts", 0, 1024, 0);
    if (s->experts == 0) throw f.fail("num_experts", "must be at least 1 when moe_every_n_layers is set");
    s->moe_top_k = optional_in(f, "moe_top_k", 1, s->experts, 1);
    if (f.integer("num_shared_experts").value_or(0) != 0) {
      throw f.fail("num_shared_experts", "is set: shared experts are not supported");
    }
    if (f.boolean("expert_choice_router").value_or(false)) {
      throw f.fail("expert_choice_router", "is true: expert-choice routing is not supported");
    }
    // megablocks' p-norm order of the kept weights (null or false: none).
    if (f.has("moe_normalize_expert_weights")) {
      bool off = false;
      try {
        off = f.boolean("moe_normalize_expert_weights") == false;
      } catch (const Error&) {
        off = false;  // a number: a norm order
      }
      if (!off)
        throw f.fail("moe_normalize_expert_weights", "is set: renormalised expert weights are not supported");
    }
    if (gated) throw f.fail("activation_function", "is gated: gated experts are not supported");
  }
  if (const auto kv = f.integer("num_heads_kv");
      kv && *kv != static_cast<std::int64_t>(c.num_attention_heads)) {
    throw f.fail("num_heads_kv", "differs from n_head: grouped-query attention is not supported here");
  }
  return s;
}

void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& dir) {
  const auto& s = settings_of<Settings>(config);
  p.names = kNames;
  // NomicBertBlock: SwiGLU (fc11(x) · silu(fc12(x))) or GEGLU (exact GELU), or NomicBertMLP's
  // plain fc1-GELU-fc2; biases as the config says (nomic-embed-text has none).
  const std::string& act = config.hidden_act;
  if (act == "swiglu" || act == "geglu") {
    p.dims.gated_ffn = true;
    p.dims.ffn_activation = act == "swiglu" ? kernels::Activation::Silu : kernels::Activation::Gelu;
  } else if (act == "gelu") {
    p.dims.ffn_activation = kernels::Activation::Gelu;
  } else {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: activation_function '{}' is not supported (swiglu, geglu, gelu)",
                            config_path(dir), act));
  }
  p.biases = {s.qkv_proj_bias, s.mlp_fc1_bias, s.mlp_fc2_bias};
  // NomicBertAttention: rotary_emb_dim = head_dim · rotary_emb_fraction; without rotary,
  // NomicBertEmbeddings has an absolute position table of n_positions rows.
  const double rotated = static_cast<double>(config.head_dim()) * s.rotary_fraction;
  if (rotated != std::floor(rotated) || static_cast<std::size_t>(rotated) % 2 != 0) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: rotary_emb_fraction {} of the head size {} is not an even number of dimensions",
                    config_path(dir), s.rotary_fraction, config.head_dim()));
  }
  p.dims.rotary_dims = static_cast<std::size_t>(rotated);
  p.dims.position_embeddings = p.dims.rotary_dims == 0;
  p.dims.rotary_base = s.rotary_base;
  p.dims.rotary_interleaved = s.rotary_interleaved;
  p.dims.rotary_ntk_factor = s.rotary_scaling_factor;
  p.dims.rotary_max_trained = s.max_trained_positions;
  if (s.moe_every_n_layers > 0) {
    // NomicBertEncoder: layer i is a NomicMoELayer when i % moe_every_n_layers == 1.
    p.dims.moe_layers.resize(config.num_hidden_layers);
    for (std::size_t i = 0; i < config.num_hidden_layers; ++i) {
      p.dims.moe_layers[i] = i % s.moe_every_n_layers == 1;
    }
    p.dims.experts = s.experts;
    p.dims.moe_top_k = s.moe_top_k;
    p.names.moe_router = "mlp.router.layer";
    p.names.moe_up = "mlp.experts.mlp.w1";
    p.names.moe_down = "mlp.experts.mlp.w2";
    p.names.moe_bias = "mlp.experts.bias";
  }
}

}  // namespace

extern const Family kNomicBertFamily;
const Family kNomicBertFamily{
    .name = "nomic-bert",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .activation_key = "",
    .plan = plan,
    .weight_prefix = "bert.",
    .heads_key = "n_head",
};

}  // namespace warden::model::families

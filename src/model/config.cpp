#include "model/config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/json_fields.hpp"

namespace warden {

namespace {

using json_fields::Fields;

// Upper bounds no real encoder comes near, low enough that products of them cannot overflow
// and that a hostile file cannot make the loader reserve absurd memory.
constexpr std::int64_t kMaxHidden = 1 << 16;
constexpr std::int64_t kMaxLayers = 1 << 10;
constexpr std::int64_t kMaxIntermediate = 1 << 20;
constexpr std::int64_t kMaxVocab = 1 << 24;
constexpr std::int64_t kMaxPositions = 1 << 20;
constexpr std::int64_t kMaxTypeVocab = 1 << 16;
constexpr std::size_t kMaxLabels = 1 << 16;

std::size_t to_size(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

// A norm's epsilon under `key` (absent or null: `fallback`), in (0, 1); Error naming the key else.
double read_eps(const Fields& f, std::string_view key, double fallback) {
  const double eps = f.number(key).value_or(fallback);
  if (!std::isfinite(eps) || eps <= 0.0 || eps >= 1.0)
    throw f.fail(key, fmt::format("is {}, outside (0, 1)", eps));
  return eps;
}

std::size_t optional_in(const Fields& f, std::string_view key, std::int64_t min, std::int64_t max,
                        std::size_t fallback) {
  return f.has(key) ? to_size(f.integer_in(key, min, max)) : fallback;
}

// "0" -> 0; anything but a plain non-negative decimal integer -> nullopt.
std::optional<std::size_t> parse_index(std::string_view s) {
  std::size_t v = 0;
  if (s.empty() || s.size() > 9) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

void read_labels(const Fields& f, ModelConfig& c) {
  if (const auto id2label = f.object("id2label")) {
    std::map<std::size_t, std::string> by_id;
    for (const auto field : *id2label) {
      const std::string_view key = field.key;
      const auto id = parse_index(key);
      std::string_view name;
      if (!id) throw f.fail("id2label", fmt::format("has key \"{}\", which is not a class index", key));
      if (field.value.get_string().get(name) != simdjson::SUCCESS) {
        throw f.fail("id2label", fmt::format("entry \"{}\" is not a string", key));
      }
      if (!by_id.emplace(*id, std::string(name)).second) {
        throw f.fail("id2label", fmt::format("lists class {} twice", *id));
      }
    }
    if (by_id.size() > kMaxLabels) throw f.fail("id2label", "has too many classes");
    std::size_t expected = 0;
    for (auto& [id, name] : by_id) {
      if (id != expected++) throw f.fail("id2label", fmt::format("skips class {}", expected - 1));
      c.id2label.push_back(std::move(name));
    }
  } else {
    const std::size_t n = optional_in(f, "num_labels", 1, kMaxLabels, 2);
    for (std::size_t i = 0; i < n; ++i) c.id2label.push_back(fmt::format("LABEL_{}", i));
  }
  if (c.id2label.empty()) throw f.fail("id2label", "is empty");

  if (const auto label2id = f.object("label2id")) {
    for (const auto field : *label2id) {
      std::int64_t id = 0;
      if (field.value.get_int64().get(id) != simdjson::SUCCESS) {
        throw f.fail("label2id", fmt::format("entry \"{}\" is not an integer", std::string_view(field.key)));
      }
      c.label2id[std::string(field.key)] = id;
    }
  } else {
    for (std::size_t i = 0; i < c.id2label.size(); ++i)
      c.label2id[c.id2label[i]] = static_cast<std::int64_t>(i);
  }
}

// DebertaV2Config's fields (and the getattr defaults of its modelling code); what Warden
// does not run (convolution layer, embedding projection, p2p attention) is refused by name.
void read_deberta(const Fields& f, ModelConfig& c) {
  ModelConfig::Deberta& d = c.deberta;
  if (!f.has("type_vocab_size")) c.type_vocab_size = 0;
  if (!f.has("layer_norm_eps")) c.layer_norm_eps = 1e-7;
  d.relative_attention = f.boolean("relative_attention").value_or(false);
  if (f.has("max_relative_positions"))
    d.max_relative_positions = f.integer_in("max_relative_positions", -1, kMaxPositions);
  if (f.has("position_buckets")) d.position_buckets = f.integer_in("position_buckets", -1, kMaxPositions);
  d.share_att_key = f.boolean("share_att_key").value_or(false);
  d.position_biased_input = f.boolean("position_biased_input").value_or(true);
  d.pooler_hidden_act = f.string("pooler_hidden_act").value_or("gelu");
  // pos_att_type: a list, or the older "p2c|c2p" string; lower-cased as the config class does.
  std::vector<std::string> kinds;
  if (const auto list = f.array("pos_att_type")) {
    for (const auto v : *list) {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) throw f.fail("pos_att_type", "must hold strings");
      kinds.emplace_back(s);
    }
  } else if (const auto joined = f.string("pos_att_type")) {
    std::string_view rest = *joined;
    while (!rest.empty()) {
      const std::size_t bar = rest.find('|');
      kinds.emplace_back(rest.substr(0, bar));
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
  }
  for (std::string k : kinds) {
    k.erase(0, k.find_first_not_of(' '));
    k.erase(k.find_last_not_of(' ') + 1);
    std::transform(k.begin(), k.end(), k.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (k == "c2p") {
      d.c2p = true;
    } else if (k == "p2c") {
      d.p2c = true;
    } else if (!k.empty() && k != "none") {
      throw f.fail("pos_att_type", fmt::format("holds \"{}\"; supported: c2p, p2c", k));
    }
  }
  const std::string norm = f.string("norm_rel_ebd").value_or("none");
  d.norm_rel_ebd = norm.find("layer_norm") != std::string::npos;
  if (f.has("conv_kernel_size") && f.integer_in("conv_kernel_size", 0, 1 << 10) > 0) {
    throw f.fail("conv_kernel_size", "is set: DeBERTa-v2's convolution layer is not supported");
  }
  if (f.has("embedding_size") && f.integer("embedding_size") != f.integer("hidden_size")) {
    throw f.fail("embedding_size", "differs from hidden_size: the embedding projection is not supported");
  }
  if (f.has("pooler_hidden_size") && f.integer("pooler_hidden_size") != f.integer("hidden_size")) {
    throw f.fail("pooler_hidden_size", "differs from hidden_size, which the classification head needs");
  }
  if (f.has("attention_head_size") &&
      f.integer("attention_head_size").value_or(0) * f.integer("num_attention_heads").value_or(0) !=
          f.integer("hidden_size").value_or(0)) {
    throw f.fail("attention_head_size", "times the heads differs from hidden_size: not supported");
  }
}

// NomicBertConfig (nomic-ai/nomic-bert-2048's configuration_hf_nomic_bert.py), a GPT2Config:
// GPT-2's key names and defaults where the file says nothing. NomicBertModel pads the
// vocabulary to pad_vocab_size_multiple, and its gated MLP rounds n_inner (default 8/3 of the
// width) up to a multiple of 256 (NomciBertGatedMLP's multiple_of); what it builds is what the
// weights have, so those are the sizes read here. Variants Warden does not run are refused by
// name.
void read_nomic(const Fields& f, ModelConfig& c) {
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
    inner = to_size(f.integer_in("n_inner", 1, kMaxIntermediate));
  } else {
    inner = gated ? c.hidden_size * 8 / 3 : 4 * c.hidden_size;
  }
  if (gated) inner = (inner + 255) / 256 * 256;
  c.intermediate_size = inner;
  const std::size_t vocab = optional_in(f, "vocab_size", 1, kMaxVocab, 50257);
  const std::size_t multiple = optional_in(f, "pad_vocab_size_multiple", 1, 1 << 16, 1);
  c.vocab_size = (vocab + multiple - 1) / multiple * multiple;
  ModelConfig::Nomic& n = c.nomic;
  n.qkv_proj_bias = f.boolean("qkv_proj_bias").value_or(true);
  n.mlp_fc1_bias = f.boolean("mlp_fc1_bias").value_or(true);
  n.mlp_fc2_bias = f.boolean("mlp_fc2_bias").value_or(true);
  ModelConfig::Rotary& r = c.rotary;
  r.base = f.number("rotary_emb_base").value_or(10000.0);
  r.fraction = f.number("rotary_emb_fraction").value_or(0.0);
  r.interleaved = f.boolean("rotary_emb_interleaved").value_or(false);
  r.scaling_factor = f.number("rotary_scaling_factor");
  r.max_trained_positions = optional_in(f, "max_trained_positions", 1, kMaxPositions, 2048);
  if (!std::isfinite(r.base) || r.base <= 1.0) throw f.fail("rotary_emb_base", "must be a number above 1");
  if (!std::isfinite(r.fraction) || r.fraction < 0.0 || r.fraction > 1.0) {
    throw f.fail("rotary_emb_fraction", "must be in [0, 1]");
  }
  if (r.scaling_factor && (!std::isfinite(*r.scaling_factor) || *r.scaling_factor < 1.0)) {
    throw f.fail("rotary_scaling_factor", "must be null or a number of at least 1");
  }
  for (const char* key : {"prenorm", "parallel_block", "use_rms_norm", "causal"}) {
    if (f.boolean(key).value_or(false)) throw f.fail(key, "is true: that NomicBERT variant is not supported");
  }
  if (f.number("rotary_emb_scale_base")) {
    throw f.fail("rotary_emb_scale_base", "is set: xPos-scaled rotary embeddings are not supported");
  }
  if (f.integer("moe_every_n_layers").value_or(0) > 0) {
    throw f.fail("moe_every_n_layers", "is set: mixture-of-experts layers are not supported");
  }
  if (const auto kv = f.integer("num_heads_kv");
      kv && *kv != static_cast<std::int64_t>(c.num_attention_heads)) {
    throw f.fail("num_heads_kv", "differs from n_head: grouped-query attention is not supported here");
  }
}

// NewConfig (Alibaba-NLP/new-impl configuration.py; the GTE v1.5 and multilingual models):
// BERT's key names with NewConfig's defaults, rotary positions from rope_theta, and fixed NTK
// rope_scaling. What Warden does not run is refused by name.
void read_gte(const Fields& f, ModelConfig& c) {
  if (!f.has("type_vocab_size")) c.type_vocab_size = 1;
  if (!f.has("max_position_embeddings")) c.max_position_embeddings = 2048;
  c.position_embedding_type = f.string("position_embedding_type").value_or("rope");
  ModelConfig::Rotary& r = c.rotary;
  r.base = f.number("rope_theta").value_or(10000.0);
  r.fraction = c.position_embedding_type == "rope" ? 1.0 : 0.0;
  if (!std::isfinite(r.base) || r.base <= 1.0) throw f.fail("rope_theta", "must be a number above 1");
  if (const auto scaling = f.object("rope_scaling")) {
    const Fields s(*scaling, f.source());
    const std::string type = s.string("type").value_or("");
    if (type != "ntk") {
      throw f.fail("rope_scaling", fmt::format("has type \"{}\"; supported: ntk", type));
    }
    if (s.has("mixed_b")) throw f.fail("rope_scaling", "has mixed_b: mixed NTK scaling is not supported");
    const auto factor = s.number("factor");
    if (!factor || !std::isfinite(*factor) || *factor <= 0.0)
      throw f.fail("rope_scaling", "needs a positive factor");
    r.fixed_ntk_factor = *factor;
  }
  if (f.string("layer_norm_type").value_or("layer_norm") != "layer_norm") {
    throw f.fail("layer_norm_type", "is not layer_norm: RMSNorm GTE layers are not supported");
  }
  if (f.boolean("logn_attention_scale").value_or(false)) {
    throw f.fail("logn_attention_scale", "is true: log-n attention scaling is not supported");
  }
  c.gte_packed_qkv = f.boolean("pack_qkv").value_or(true);
}

// A rotary theta: a finite number above 1.
double read_theta(const Fields& f, std::string_view key, double value) {
  if (!std::isfinite(value) || value <= 1.0) throw f.fail(key, "must be a number above 1");
  return value;
}

// A rope_scaling that scales nothing (absent, null, or of type "default"): Error naming the key
// for another type (yarn, linear, dynamic, ...), which Warden does not run.
void require_default_rope_scaling(const Fields& f) {
  if (const auto scaling = f.object("rope_scaling")) {
    const Fields s(*scaling, f.source());
    const std::string type = s.string("rope_type").value_or(s.string("type").value_or("default"));
    if (type != "default")
      throw f.fail("rope_scaling", fmt::format("has type \"{}\"; supported: default", type));
  }
}

// One layer type's entry of rope_parameters ({"rope_type": "default", "rope_theta": ...}): its
// theta, or `fallback` when it names none. Scaled rotary types are refused.
double read_rope_parameters(const Fields& f, const simdjson::dom::object& entry, std::string_view layer_type,
                            double fallback) {
  const Fields e(entry, f.source());
  const std::string type = e.string("rope_type").value_or(e.string("type").value_or("default"));
  if (type != "default") {
    throw f.fail("rope_parameters",
                 fmt::format("gives {} the rope_type \"{}\"; supported: default", layer_type, type));
  }
  return e.has("rope_theta") ? read_theta(f, "rope_parameters", e.number("rope_theta").value_or(0.0))
                             : fallback;
}

// ModernBertConfig (transformers' configuration_modernbert.py): its key names and defaults, the
// older global_rope_theta / local_rope_theta and the newer rope_parameters per layer type, and
// layer_types, which (as ModernBertRotaryEmbedding does) choose each layer's rotary base while
// global_attn_every_n_layers chooses its window (ModernBertAttention).
void read_modernbert(const Fields& f, ModelConfig& c) {
  ModelConfig::ModernBert& m = c.modernbert;
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_activation").value_or("gelu");
  c.layer_norm_eps = read_eps(f, "norm_eps", 1e-5);
  if (!f.has("max_position_embeddings")) c.max_position_embeddings = 8192;
  m.local_attention = optional_in(f, "local_attention", 2, kMaxPositions, 128);
  m.global_every = optional_in(f, "global_attn_every_n_layers", 1, kMaxLayers, 3);
  m.norm_bias = f.boolean("norm_bias").value_or(false);
  m.attention_bias = f.boolean("attention_bias").value_or(false);
  m.mlp_bias = f.boolean("mlp_bias").value_or(false);
  m.classifier_bias = f.boolean("classifier_bias").value_or(false);
  m.classifier_pooling = f.string("classifier_pooling").value_or("cls");
  if (m.classifier_pooling != "cls" && m.classifier_pooling != "mean") {
    throw f.fail("classifier_pooling",
                 fmt::format("is \"{}\"; it must be cls or mean", m.classifier_pooling));
  }
  m.classifier_activation = f.string("classifier_activation").value_or("gelu");
  m.global_rope_theta = read_theta(f, "global_rope_theta", f.number("global_rope_theta").value_or(160000.0));
  m.local_rope_theta = read_theta(f, "local_rope_theta", f.number("local_rope_theta").value_or(10000.0));
  require_default_rope_scaling(f);
  if (const auto params = f.object("rope_parameters")) {
    for (const auto field : *params) {
      const std::string_view key = field.key;
      simdjson::dom::object entry;
      if (key != "full_attention" && key != "sliding_attention") {
        throw f.fail(
            "rope_parameters",
            fmt::format("has \"{}\"; the layer types are full_attention and sliding_attention", key));
      }
      if (field.value.is_null()) continue;
      if (field.value.get_object().get(entry) != simdjson::SUCCESS) {
        throw f.fail("rope_parameters", fmt::format("entry \"{}\" is not an object", key));
      }
      double& theta = key == "full_attention" ? m.global_rope_theta : m.local_rope_theta;
      theta = read_rope_parameters(f, entry, key, theta);
    }
  }
  const std::size_t layers = c.num_hidden_layers;
  m.sliding_rope.assign(layers, false);
  if (const auto types = f.array("layer_types")) {
    std::size_t i = 0;
    for (const auto v : *types) {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS || (s != "full_attention" && s != "sliding_attention")) {
        throw f.fail("layer_types", "must hold \"full_attention\" or \"sliding_attention\" per layer");
      }
      if (i < layers) m.sliding_rope[i] = s == "sliding_attention";
      ++i;
    }
    if (i != layers) {
      throw f.fail("layer_types", fmt::format("lists {} layers; the model has {}", i, layers));
    }
  } else {
    for (std::size_t i = 0; i < layers; ++i) m.sliding_rope[i] = i % m.global_every != 0;
  }
}

// Qwen3Config (transformers' configuration_qwen3.py): its key names and defaults. Scaled rotary
// positions (rope_scaling / rope_parameters other than "default") and the sliding-window layers
// (use_sliding_window) are refused by name: the embedding and reranking checkpoints use neither.
void read_qwen3(const Fields& f, ModelConfig& c) {
  ModelConfig::Qwen3& q = c.qwen3;
  c.type_vocab_size = 0;
  c.hidden_act = f.string("hidden_act").value_or("silu");
  c.layer_norm_eps = read_eps(f, "rms_norm_eps", 1e-6);
  if (!f.has("max_position_embeddings")) c.max_position_embeddings = 32768;
  q.kv_heads = optional_in(f, "num_key_value_heads", 1, kMaxHidden, c.num_attention_heads);
  if (c.num_attention_heads % q.kv_heads != 0) {
    throw f.fail("num_key_value_heads", fmt::format("is {}, which does not divide num_attention_heads {}",
                                                    q.kv_heads, c.num_attention_heads));
  }
  q.head_dim = optional_in(f, "head_dim", 2, kMaxHidden, c.hidden_size / c.num_attention_heads);
  if (q.head_dim % 2 != 0) throw f.fail("head_dim", "must be even (rotary turns pairs of values)");
  q.attention_bias = f.boolean("attention_bias").value_or(false);
  q.tie_word_embeddings = f.boolean("tie_word_embeddings").value_or(false);
  c.rotary.base = read_theta(f, "rope_theta", f.number("rope_theta").value_or(10000.0));
  require_default_rope_scaling(f);
  if (const auto params = f.object("rope_parameters")) {
    c.rotary.base = read_rope_parameters(f, *params, "every layer", c.rotary.base);
  }
  if (f.boolean("use_sliding_window").value_or(false)) {
    throw f.fail("use_sliding_window", "is true: Warden does not run Qwen3's sliding-window layers");
  }
}

}  // namespace

ModelConfig parse_model_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(json_fields::parse_object(parser, json, source), source);
  ModelConfig c;

  const auto model_type = f.string("model_type");
  if (!model_type || model_type->empty()) throw f.fail("model_type", "is missing");
  c.model_type = *model_type;
  if (const auto archs = f.array("architectures")) {
    for (const auto a : *archs) {
      std::string_view name;
      if (a.get_string().get(name) != simdjson::SUCCESS) throw f.fail("architectures", "must hold strings");
      c.architectures.emplace_back(name);
    }
  }
  // transformers >= 4.56 writes "dtype" where older versions wrote "torch_dtype".
  c.torch_dtype = f.string("torch_dtype");
  if (!c.torch_dtype) c.torch_dtype = f.string("dtype");

  const bool distilbert = c.model_type == "distilbert";
  const bool nomic = c.model_type == "nomic_bert";
  if (nomic) {
    read_nomic(f, c);
  } else if (distilbert) {
    c.hidden_size = to_size(f.integer_in("dim", 1, kMaxHidden));
    c.num_hidden_layers = to_size(f.integer_in("n_layers", 1, kMaxLayers));
    c.num_attention_heads = to_size(f.integer_in("n_heads", 1, kMaxHidden));
    c.intermediate_size = to_size(f.integer_in("hidden_dim", 1, kMaxIntermediate));
    c.hidden_act = f.string("activation").value_or("gelu");
    c.sinusoidal_pos_embds = f.boolean("sinusoidal_pos_embds").value_or(false);
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-12;  // fixed in DistilBERT's modelling code, not configurable
  } else {
    c.hidden_size = to_size(f.integer_in("hidden_size", 1, kMaxHidden));
    c.num_hidden_layers = to_size(f.integer_in("num_hidden_layers", 1, kMaxLayers));
    c.num_attention_heads = to_size(f.integer_in("num_attention_heads", 1, kMaxHidden));
    c.intermediate_size = to_size(f.integer_in("intermediate_size", 1, kMaxIntermediate));
    c.hidden_act = f.string("hidden_act").value_or("gelu");
    c.type_vocab_size = optional_in(f, "type_vocab_size", 0, kMaxTypeVocab, 2);
    c.position_embedding_type = f.string("position_embedding_type").value_or("absolute");
    c.layer_norm_eps = read_eps(f, "layer_norm_eps", c.layer_norm_eps);
  }
  if (c.model_type == "deberta-v2") read_deberta(f, c);
  if (c.model_type == "new") read_gte(f, c);
  if (c.model_type == "modernbert") read_modernbert(f, c);
  const bool qwen3 = c.model_type == "qwen3";
  if (qwen3) read_qwen3(f, c);
  if (c.model_type == "mpnet") {
    if (!f.has("type_vocab_size")) c.type_vocab_size = 0;  // MPNetConfig has no token types
    // MPNetEncoder.compute_position_bias reads buckets 0..31 of this table whatever it says.
    c.relative_attention_num_buckets =
        optional_in(f, "relative_attention_num_buckets", 32, kMaxPositions, 32);
  }
  c.feed_forward_type = f.string("feed_forward_type").value_or("original");
  if (!nomic) {
    c.vocab_size = to_size(f.integer_in("vocab_size", 1, kMaxVocab));
    c.max_position_embeddings = optional_in(f, "max_position_embeddings", 1, kMaxPositions, 512);
  }

  // (Qwen3's heads have their own size, head_dim.)
  if (!qwen3 && (c.num_attention_heads > c.hidden_size || c.hidden_size % c.num_attention_heads != 0)) {
    throw f.fail(
        distilbert ? "n_heads"
        : nomic    ? "n_head"
                   : "num_attention_heads",
        fmt::format("is {}, which does not divide the hidden size {}", c.num_attention_heads, c.hidden_size));
  }

  // transformers' class defaults: BERT and DistilBERT pad with 0, RoBERTa/XLM-R/MPNet with 1.
  const bool roberta_like =
      c.model_type == "roberta" || c.model_type == "xlm-roberta" || c.model_type == "mpnet";
  if (f.has("pad_token_id")) {
    const auto pad = f.integer("pad_token_id");
    if (*pad < 0 || static_cast<std::uint64_t>(*pad) >= c.vocab_size) {
      throw f.fail("pad_token_id", fmt::format("is {}, outside the vocabulary of {}", *pad, c.vocab_size));
    }
    c.pad_token_id = pad;
  } else if (c.model_type == "bert" || distilbert || roberta_like) {
    c.pad_token_id = roberta_like ? 1 : 0;
  }
  if (roberta_like && c.pad_token_id) {
    // Position ids start at pad_token_id + 1, so the table must be longer than that.
    if (static_cast<std::size_t>(*c.pad_token_id) + 1 >= c.max_position_embeddings) {
      throw f.fail("max_position_embeddings",
                   fmt::format("is {}, too small for positions offset by pad_token_id + 1 = {}",
                               c.max_position_embeddings, *c.pad_token_id + 1));
    }
  }

  read_labels(f, c);
  return c;
}

ModelConfig read_model_config(const std::filesystem::path& path) {
  return parse_model_config(read_file(path), path.string());
}

}  // namespace warden

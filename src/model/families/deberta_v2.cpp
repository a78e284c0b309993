// DeBERTa-v2/v3 (modeling_deberta_v2.py): disentangled attention over a relative-position
// table (c2p, p2c; log-bucketed distances), optional absolute positions, and ContextPooler.

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "model/engine/relative_positions.hpp"
#include "model/families/common.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

namespace {

using namespace metadata::config_keys;

constexpr FamilyClass kClasses[] = {
    {"DebertaV2Model", ClassRole::Encoder},
    {"DebertaV2ForSequenceClassification", ClassRole::Classifier},
};
constexpr std::string_view kModelTypes[] = {"deberta-v2"};

constexpr engine::LayerNames kNames{"encoder.layer.",          "attention.self.query_proj",
                                    "attention.self.key_proj", "attention.self.value_proj",
                                    "attention.output.dense",  "attention.output.LayerNorm",
                                    "intermediate.dense",      "output.dense",
                                    "output.LayerNorm"};

// DebertaV2Config's fields, with its defaults (and the getattr defaults of its modelling code).
struct Settings : FamilySettings {
  bool relative_attention = false;
  std::int64_t max_relative_positions = -1;  // < 1: max_position_embeddings
  std::int64_t position_buckets = -1;        // <= 0: distances are not log-bucketed
  bool c2p = false;                          // pos_att_type holds "c2p"
  bool p2c = false;                          // ... "p2c"
  bool share_att_key = false;                // c2p/p2c project with the layer's key/query weights
  bool norm_rel_ebd = false;                 // "layer_norm" in norm_rel_ebd: the table is LayerNormed once
  bool position_biased_input = true;
  std::string pooler_hidden_act = "gelu";
};

// What Warden does not run (convolution layer, embedding projection, p2p attention) is refused
// by name.
std::shared_ptr<const FamilySettings> read_config(const formats::json_fields::Fields& f,
                                                  metadata::ModelConfig& c) {
  read_bert_shape(f, c);
  auto d = std::make_shared<Settings>();
  if (!f.has("type_vocab_size")) c.type_vocab_size = 0;
  if (!f.has("layer_norm_eps")) c.layer_norm_eps = 1e-7;
  d->relative_attention = f.boolean("relative_attention").value_or(false);
  if (f.has("max_relative_positions"))
    d->max_relative_positions = f.integer_in("max_relative_positions", -1, kMaxPositions);
  if (f.has("position_buckets")) d->position_buckets = f.integer_in("position_buckets", -1, kMaxPositions);
  d->share_att_key = f.boolean("share_att_key").value_or(false);
  d->position_biased_input = f.boolean("position_biased_input").value_or(true);
  d->pooler_hidden_act = f.string("pooler_hidden_act").value_or("gelu");
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
      d->c2p = true;
    } else if (k == "p2c") {
      d->p2c = true;
    } else if (!k.empty() && k != "none") {
      throw f.fail("pos_att_type", fmt::format("holds \"{}\"; supported: c2p, p2c", k));
    }
  }
  const std::string norm = f.string("norm_rel_ebd").value_or("none");
  d->norm_rel_ebd = norm.find("layer_norm") != std::string::npos;
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
  return d;
}

void plan(const metadata::ModelConfig& config, EncoderPlan& p, const std::filesystem::path& /*dir*/) {
  const auto& db = settings_of<Settings>(config);
  p.names = kNames;
  p.dims.position_embeddings = db.position_biased_input;
  p.dims.c2p = db.c2p;
  p.dims.p2c = db.p2c;
  if (db.relative_attention && (db.c2p || db.p2c)) {
    // DisentangledSelfAttention: the table has 2·span rows, span = position_buckets when set,
    // else max_relative_positions (which defaults to max_position_embeddings).
    const std::int64_t max_relative = db.max_relative_positions < 1
                                          ? static_cast<std::int64_t>(config.max_position_embeddings)
                                          : db.max_relative_positions;
    const std::int64_t span = db.position_buckets > 0 ? db.position_buckets : max_relative;
    p.dims.relative_rows =
        engine::relative_rows(p.dims.max_positions - 1, span, db.position_buckets, max_relative);
    p.relative.table_rows = 2 * static_cast<std::size_t>(span);
    p.relative.norm = db.norm_rel_ebd;
    p.relative.shared = db.share_att_key;
  }
}

// ContextPooler: dense and pooler_hidden_act on the first token, then the classifier.
heads::ClassifierHead classifier(const HeadSource& s) {
  const auto& db = settings_of<Settings>(s.config);
  return dense_head(s, s.root, "pooler.dense",
                    activation_named(db.pooler_hidden_act, "pooler_hidden_act", s.dir), "classifier");
}

}  // namespace

extern const Family kDebertaV2Family;
const Family kDebertaV2Family{
    .name = "deberta-v2",
    .classes = kClasses,
    .model_types = kModelTypes,
    .read_config = read_config,
    .plan = plan,
    .weight_prefix = "deberta.",
    .classifier = classifier,
};

}  // namespace warden::model::families

#include "model/config.hpp"

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
  if (distilbert) {
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
    if (const auto eps = f.number("layer_norm_eps")) {
      if (!std::isfinite(*eps) || *eps <= 0.0 || *eps >= 1.0) {
        throw f.fail("layer_norm_eps", fmt::format("is {}, outside (0, 1)", *eps));
      }
      c.layer_norm_eps = *eps;
    }
  }
  c.vocab_size = to_size(f.integer_in("vocab_size", 1, kMaxVocab));
  c.max_position_embeddings = optional_in(f, "max_position_embeddings", 1, kMaxPositions, 512);

  if (c.num_attention_heads > c.hidden_size || c.hidden_size % c.num_attention_heads != 0) {
    throw f.fail(
        distilbert ? "n_heads" : "num_attention_heads",
        fmt::format("is {}, which does not divide the hidden size {}", c.num_attention_heads, c.hidden_size));
  }

  // transformers' class defaults: BERT and DistilBERT pad with 0, RoBERTa/XLM-R with 1.
  const bool roberta_like = c.model_type == "roberta" || c.model_type == "xlm-roberta";
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

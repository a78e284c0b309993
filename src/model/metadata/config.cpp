#include "model/metadata/config.hpp"

#include <charconv>
#include <map>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "model/formats/json_fields.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::metadata {

namespace {

using formats::json_fields::Fields;

using config_keys::optional_in;
constexpr std::size_t kMaxLabels = 1 << 16;

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

void read_config_identity(const Fields& f, ModelConfig& c) {
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
  c.position_embedding_type = f.string("position_embedding_type").value_or("absolute");
  if (const auto auto_map = f.object("auto_map")) {
    // "repo--module.Class" or "module.Class": the class is what follows the last dot.
    const Fields m(*auto_map, f.source());
    std::string name;
    try {
      name = m.string("AutoConfig").value_or("");
    } catch (const Error&) {
      throw f.fail("auto_map", "has an AutoConfig that is not a string");
    }
    const std::size_t dot = name.rfind('.');
    c.remote_config = dot == std::string::npos ? name : name.substr(dot + 1);
  }
}

void read_config_padding_and_labels(const Fields& f, ModelConfig& c,
                                    std::optional<std::int64_t> default_pad_token_id,
                                    bool positions_after_pad) {
  if (f.has("pad_token_id")) {
    const auto pad = f.integer("pad_token_id");
    if (*pad < 0 || static_cast<std::uint64_t>(*pad) >= c.vocab_size) {
      throw f.fail("pad_token_id", fmt::format("is {}, outside the vocabulary of {}", *pad, c.vocab_size));
    }
    c.pad_token_id = pad;
  } else {
    c.pad_token_id = default_pad_token_id;
  }
  if (positions_after_pad && c.pad_token_id) {
    // Position ids start at pad_token_id + 1, so the table must be longer than that.
    if (static_cast<std::size_t>(*c.pad_token_id) + 1 >= c.max_position_embeddings) {
      throw f.fail("max_position_embeddings",
                   fmt::format("is {}, too small for positions offset by pad_token_id + 1 = {}",
                               c.max_position_embeddings, *c.pad_token_id + 1));
    }
  }
  read_labels(f, c);
}

}  // namespace warden::model::metadata

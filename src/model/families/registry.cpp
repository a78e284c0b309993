#include "model/families/registry.hpp"

#include <array>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/metadata/config_keys.hpp"

namespace warden::model::families {

// One line per family (each defined in its own file).
extern const Family kBertFamily;
extern const Family kRobertaFamily;
extern const Family kDistilBertFamily;
extern const Family kDebertaV2Family;
extern const Family kJinaBertFamily;
extern const Family kMpnetFamily;
extern const Family kNomicBertFamily;
extern const Family kGteFamily;
extern const Family kModernBertFamily;
extern const Family kQwen3Family;
extern const Family kQwen2Family;
extern const Family kGemma3Family;
extern const Family kLlamaFamily;
extern const Family kGemmaFamily;
extern const Family kMistralFamily;
extern const Family kXlmRobertaFlashFamily;

namespace {

const std::array kFamilies{&kBertFamily,       &kRobertaFamily, &kDistilBertFamily, &kDebertaV2Family,
                           &kJinaBertFamily,   &kMpnetFamily,   &kNomicBertFamily,  &kGteFamily,
                           &kModernBertFamily, &kQwen3Family,   &kQwen2Family,      &kGemma3Family,
                           &kLlamaFamily,      &kMistralFamily, &kGemmaFamily,      &kXlmRobertaFlashFamily};

// The family whose remote code the config names (Family::remote_configs), or null.
const Family* remote_family(const metadata::ModelConfig& config) {
  if (config.remote_config.empty()) return nullptr;
  for (const Family* f : kFamilies) {
    for (const std::string_view r : f->remote_configs) {
      if (r == config.remote_config) return f;
    }
  }
  return nullptr;
}

// The class `name` among the classes of the config's remote-code family when it has one, else of
// every family.
std::optional<ResolvedClass> find_class(std::string_view name, const metadata::ModelConfig& config) {
  const Family* remote = remote_family(config);
  for (const Family* f : kFamilies) {
    if (remote != nullptr && f != remote) continue;
    for (const FamilyClass& c : f->classes) {
      if (c.name == name) return ResolvedClass{f, &c};
    }
  }
  return std::nullopt;
}

// The class a config names: its first "architectures" entry, else its model_type's base model
// (its remote-code family's, when it has one).
std::string named_class(const metadata::ModelConfig& config) {
  if (!config.architectures.empty()) return config.architectures.front();
  const Family* remote = remote_family(config);
  const Family* f = remote != nullptr ? remote : for_model_type(config.model_type);
  if (f == nullptr) return {};
  if (f->base_class != nullptr) return std::string(f->base_class(config));
  for (const FamilyClass& c : f->classes) {
    if (c.role == ClassRole::Encoder) return std::string(c.name);
  }
  return {};
}

}  // namespace

std::span<const Family* const> all() {
  return kFamilies;
}

const Family* for_model_type(std::string_view model_type) {
  for (const Family* f : kFamilies) {
    for (const std::string_view t : f->model_types) {
      if (t == model_type) return f;
    }
  }
  return nullptr;
}

ResolvedClass resolve(const metadata::ModelConfig& config, const std::filesystem::path& dir) {
  const std::string named = named_class(config);
  if (const auto found = find_class(named, config)) return *found;
  throw Error(ErrorKind::Unsupported,
              fmt::format("{}: unsupported architecture '{}' (model_type '{}'); supported: {}",
                          (dir / "config.json").string(), named.empty() ? "(none)" : named, config.model_type,
                          supported_architectures()));
}

std::string class_names(const std::function<bool(const Family&, const FamilyClass&)>& pick) {
  std::string out;
  for (const Family* f : kFamilies) {
    for (const FamilyClass& c : f->classes) {
      if (!pick(*f, c)) continue;
      if (!out.empty()) out += ", ";
      out += c.name;
    }
  }
  return out;
}

std::string supported_architectures() {
  return class_names([](const Family&, const FamilyClass&) { return true; });
}

metadata::ModelConfig parse_model_config(std::string_view json, std::string_view source) {
  using model::families::Family;
  simdjson::dom::parser parser;
  const formats::json_fields::Fields f(formats::json_fields::parse_object(parser, json, source), source);
  metadata::ModelConfig c;
  metadata::read_config_identity(f, c);
  // The family of the class the config names reads its keys; a class Warden does not know is
  // read as its model_type's family would, an unknown model_type with BERT's names (loading it
  // then says which architectures are supported).
  const Family* family = nullptr;
  if (const auto named = model::families::find_class(model::families::named_class(c), c)) {
    family = named->family;
  } else {
    family = model::families::for_model_type(c.model_type);
  }
  if (family != nullptr && family->read_config != nullptr) {
    c.family_settings = family->read_config(f, c);
  } else {
    metadata::config_keys::read_bert_shape(f, c);
  }
  const bool divide = family == nullptr || family->heads_divide_hidden;
  if (divide && (c.num_attention_heads > c.hidden_size || c.hidden_size % c.num_attention_heads != 0)) {
    throw f.fail(
        family != nullptr ? family->heads_key : "num_attention_heads",
        fmt::format("is {}, which does not divide the hidden size {}", c.num_attention_heads, c.hidden_size));
  }
  metadata::read_config_padding_and_labels(f, c,
                                           family != nullptr ? family->default_pad_token_id : std::nullopt,
                                           family != nullptr && family->positions_after_pad);
  return c;
}

metadata::ModelConfig read_model_config(const std::filesystem::path& path) {
  return parse_model_config(read_file(path), path.string());
}

}  // namespace warden::model::families

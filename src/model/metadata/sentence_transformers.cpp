#include "model/metadata/sentence_transformers.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/formats/json_fields.hpp"

namespace warden::model::metadata {

namespace {

using formats::json_fields::Fields;

// A module path must stay inside the model folder: relative, no "..", no empty components.
bool is_safe_relative_path(std::string_view path) {
  if (path.empty()) return true;
  if (path.front() == '/' || path.find('\0') != std::string_view::npos ||
      path.find('\\') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

std::string_view StModule::kind() const noexcept {
  const auto dot = type.rfind('.');
  return dot == std::string::npos ? std::string_view(type) : std::string_view(type).substr(dot + 1);
}

const StModule* StModules::find(std::string_view kind) const noexcept {
  for (const auto& m : modules) {
    if (m.kind() == kind) return &m;
  }
  return nullptr;
}

StModules parse_st_modules(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto err = parser.parse(json.data(), json.size()).get(root); err != simdjson::SUCCESS) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: not valid JSON ({})", source, simdjson::error_message(err)));
  }
  simdjson::dom::array list;
  if (root.get_array().get(list) != simdjson::SUCCESS) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: the top level is not a JSON array of modules", source));
  }
  StModules out;
  std::size_t i = 0;
  for (const auto item : list) {
    const std::string where = fmt::format("{} module {}", source, i++);
    simdjson::dom::object object;
    if (item.get_object().get(object) != simdjson::SUCCESS) {
      throw Error(ErrorKind::CorruptFile, fmt::format("{}: not a JSON object", where));
    }
    const Fields f(object, where);
    StModule m;
    m.idx = static_cast<std::size_t>(f.integer_in("idx", 0, 1 << 16));
    m.name = f.string("name").value_or("");
    m.path = f.string("path").value_or("");
    const auto type = f.string("type");
    if (!type) throw f.fail("type", "is missing");
    m.type = *type;
    if (!is_safe_relative_path(m.path))
      throw f.fail("path", "must be a relative path inside the model folder");
    out.modules.push_back(std::move(m));
  }
  return out;
}

std::string_view pooling_mode_name(PoolingMode mode) noexcept {
  switch (mode) {
    case PoolingMode::Cls:
      return "cls";
    case PoolingMode::Mean:
      return "mean";
    case PoolingMode::Max:
      return "max";
    case PoolingMode::LastToken:
      return "lasttoken";
  }
  return "mean";
}

PoolingConfig parse_pooling_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  PoolingConfig c;
  c.word_embedding_dimension = static_cast<std::size_t>(f.integer_in("word_embedding_dimension", 1, 1 << 16));
  c.include_prompt = f.boolean("include_prompt").value_or(true);

  struct Flag {
    std::string_view key;
    std::string_view mode;  // the name sentence-transformers' `pooling_mode` argument uses
    std::optional<PoolingMode> supported;
  };
  static constexpr std::array<Flag, 6> kFlags{{
      {"pooling_mode_cls_token", "cls", PoolingMode::Cls},
      {"pooling_mode_mean_tokens", "mean", PoolingMode::Mean},
      {"pooling_mode_max_tokens", "max", PoolingMode::Max},
      {"pooling_mode_lasttoken", "lasttoken", PoolingMode::LastToken},
      {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens", std::nullopt},
      {"pooling_mode_weightedmean_tokens", "weightedmean", std::nullopt},
  }};

  std::vector<const Flag*> on;
  if (const auto mode = f.string("pooling_mode")) {
    for (const auto& flag : kFlags) {
      if (flag.mode == *mode) on.push_back(&flag);
    }
    if (on.empty())
      throw f.fail("pooling_mode", fmt::format("is \"{}\", not a sentence-transformers mode", *mode));
  } else {
    for (const auto& flag : kFlags) {
      if (f.boolean(flag.key).value_or(false)) on.push_back(&flag);
    }
  }
  if (on.empty()) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: no pooling mode is enabled", source));
  }
  if (on.size() > 1) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format(
            "{}: several pooling modes are enabled ({} and {}); concatenated pooling is not supported",
            source, on[0]->mode, on[1]->mode));
  }
  if (!on[0]->supported) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: pooling mode \"{}\" is not supported (cls, mean, max and "
                            "lasttoken are)",
                            source, on[0]->mode));
  }
  c.mode = *on[0]->supported;
  return c;
}

StConfig parse_st_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  StConfig c;
  if (const auto prompts = f.object("prompts")) {
    for (const auto field : *prompts) {
      std::string_view text;
      if (field.value.get_string().get(text) != simdjson::SUCCESS) {
        throw f.fail("prompts", fmt::format("entry \"{}\" is not a string", std::string_view(field.key)));
      }
      c.prompts[std::string(field.key)] = std::string(text);
    }
  }
  c.default_prompt_name = f.string("default_prompt_name");
  if (c.default_prompt_name && !c.prompts.contains(*c.default_prompt_name)) {
    throw f.fail("default_prompt_name",
                 fmt::format("names \"{}\", which is not in \"prompts\"", *c.default_prompt_name));
  }
  c.similarity_fn_name = f.string("similarity_fn_name");
  return c;
}

std::optional<std::size_t> parse_max_seq_length(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  if (!f.has("max_seq_length")) return std::nullopt;
  return static_cast<std::size_t>(f.integer_in("max_seq_length", 1, 1 << 20));
}

std::string_view dense_activation_name(DenseActivation a) noexcept {
  switch (a) {
    case DenseActivation::Identity:
      return "Identity";
    case DenseActivation::Tanh:
      return "Tanh";
    case DenseActivation::Relu:
      return "ReLU";
    case DenseActivation::Gelu:
      return "GELU";
    case DenseActivation::Silu:
      return "SiLU";
  }
  return "?";
}

DenseModuleConfig parse_dense_module_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  DenseModuleConfig c;
  c.in_features = static_cast<std::size_t>(f.integer_in("in_features", 1, 1 << 20));
  c.out_features = static_cast<std::size_t>(f.integer_in("out_features", 1, 1 << 20));
  c.bias = f.boolean("bias").value_or(true);
  // The class path sentence-transformers saves (fullname of the module), or torch.nn's alias.
  struct Named {
    std::string_view module, name;
    DenseActivation activation;
  };
  static constexpr Named kActivations[] = {
      {"torch.nn.modules.linear.", "Identity", DenseActivation::Identity},
      {"torch.nn.modules.activation.", "Tanh", DenseActivation::Tanh},
      {"torch.nn.modules.activation.", "ReLU", DenseActivation::Relu},
      {"torch.nn.modules.activation.", "GELU", DenseActivation::Gelu},
      {"torch.nn.modules.activation.", "SiLU", DenseActivation::Silu},
  };
  const std::string activation = f.string("activation_function").value_or("torch.nn.modules.linear.Identity");
  const Named* found = nullptr;
  for (const Named& n : kActivations) {
    if (activation == fmt::format("{}{}", n.module, n.name) ||
        activation == fmt::format("torch.nn.{}", n.name)) {
      found = &n;
    }
  }
  if (found == nullptr) {
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: activation_function \"{}\" is not supported (Identity, Tanh, ReLU, GELU, SiLU)",
                    source, activation));
  }
  c.activation = found->activation;
  if (f.boolean("use_residual").value_or(false)) {
    throw Error(ErrorKind::Unsupported, fmt::format("{}: use_residual is not supported", source));
  }
  return c;
}

DenseModuleConfig read_dense_module_config(const std::filesystem::path& path) {
  return parse_dense_module_config(read_file(path), path.string());
}

StModules read_st_modules(const std::filesystem::path& path) {
  return parse_st_modules(read_file(path), path.string());
}

SpladePoolingConfig parse_splade_pooling_config(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  const Fields f(formats::json_fields::parse_object(parser, json, source), source);
  SpladePoolingConfig c;
  const std::string strategy = f.string("pooling_strategy").value_or("max");
  if (strategy != "max" && strategy != "sum") {
    throw f.fail("pooling_strategy", fmt::format("is \"{}\", not \"max\" or \"sum\"", strategy));
  }
  c.sum = strategy == "sum";
  const std::string activation = f.string("activation_function").value_or("relu");
  if (activation != "relu" && activation != "log1p_relu") {
    throw f.fail("activation_function", fmt::format("is \"{}\", not \"relu\" or \"log1p_relu\"", activation));
  }
  c.log1p_twice = activation == "log1p_relu";
  return c;
}

PoolingConfig read_pooling_config(const std::filesystem::path& path) {
  return parse_pooling_config(read_file(path), path.string());
}

SpladePoolingConfig read_splade_pooling_config(const std::filesystem::path& path) {
  return parse_splade_pooling_config(read_file(path), path.string());
}

StConfig read_st_config(const std::filesystem::path& path) {
  return parse_st_config(read_file(path), path.string());
}

std::optional<std::size_t> read_max_seq_length(const std::filesystem::path& path) {
  return parse_max_seq_length(read_file(path), path.string());
}

}  // namespace warden::model::metadata

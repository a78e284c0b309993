#pragma once
// The sentence-transformers files of an embedding model folder:
//   modules.json                      the pipeline: Transformer, Pooling, Normalize, ...
//   1_Pooling/config.json             (the Pooling module's folder) the pooling mode
//   config_sentence_transformers.json prompts and the default prompt name
//   sentence_bert_config.json         the Transformer module's max_seq_length
// Errors are Error(CorruptFile) naming the file and the key; a pooling mode Warden does not
// implement (weighted mean, mean-sqrt-len, or several modes concatenated) is
// Error(Unsupported). Unknown keys are ignored.

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::model::metadata {

struct StModule {
  std::size_t idx = 0;
  std::string name;
  std::string path;  // relative to the model folder; "" for the Transformer itself
  std::string type;  // e.g. "sentence_transformers.models.Pooling"
  // The type's last component ("Pooling").
  [[nodiscard]] std::string_view kind() const noexcept;
};

struct StModules {
  std::vector<StModule> modules;
  // The first module whose type's last component is `kind` ("Pooling", "Normalize", "Dense").
  [[nodiscard]] const StModule* find(std::string_view kind) const noexcept;
};

// modules.json. Paths are checked to stay inside the model folder (relative, no "..").
StModules parse_st_modules(std::string_view json, std::string_view source);

enum class PoolingMode { Cls, Mean, Max, LastToken };
[[nodiscard]] std::string_view pooling_mode_name(PoolingMode mode) noexcept;  // "cls", "mean", ...

struct PoolingConfig {
  std::size_t word_embedding_dimension = 0;
  PoolingMode mode = PoolingMode::Mean;
  bool include_prompt = true;  // false: prompt tokens are left out of the pooling
};

// 1_Pooling/config.json: exactly one of pooling_mode_{cls_token,mean_tokens,max_tokens,
// lasttoken} true (or the newer single "pooling_mode" string).
PoolingConfig parse_pooling_config(std::string_view json, std::string_view source);

// sentence-transformers' SpladePooling module (1_SpladePooling/config.json of a SparseEncoder):
// log(1 + ReLU(logit)) per token and vocabulary id (activation_function "log1p_relu", the
// OpenSearch models', takes log1p once more), then the max (pooling_strategy "max") or the sum
// ("sum") over the sequence's tokens.
struct SpladePoolingConfig {
  bool sum = false;
  bool log1p_twice = false;
};
SpladePoolingConfig parse_splade_pooling_config(std::string_view json, std::string_view source);

// The activations a Dense module may name (torch.nn's classes, called without arguments: GELU
// is the exact one).
enum class DenseActivation { Identity, Tanh, Relu, Gelu, Silu };

// A Dense module's config.json (sentence-transformers, PyLate): activation(Linear(in_features,
// out_features[, bias])). An activation_function outside DenseActivation, or use_residual, is
// Error(Unsupported).
[[nodiscard]] std::string_view dense_activation_name(DenseActivation a) noexcept;  // "Tanh", ...

struct DenseModuleConfig {
  std::size_t in_features = 0;
  std::size_t out_features = 0;
  bool bias = true;
  DenseActivation activation = DenseActivation::Identity;
};
DenseModuleConfig parse_dense_module_config(std::string_view json, std::string_view source);

struct StConfig {
  std::map<std::string, std::string> prompts;  // name -> text prepended to the input
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> similarity_fn_name;
};

// config_sentence_transformers.json. default_prompt_name must name one of the prompts.
StConfig parse_st_config(std::string_view json, std::string_view source);

// sentence_bert_config.json's max_seq_length (the length sentence-transformers truncates
// inputs to); nullopt when the file does not set it.
std::optional<std::size_t> parse_max_seq_length(std::string_view json, std::string_view source);

// File readers (Error(NotFound) when the file is absent).
StModules read_st_modules(const std::filesystem::path& path);
PoolingConfig read_pooling_config(const std::filesystem::path& path);
SpladePoolingConfig read_splade_pooling_config(const std::filesystem::path& path);
DenseModuleConfig read_dense_module_config(const std::filesystem::path& path);
StConfig read_st_config(const std::filesystem::path& path);
std::optional<std::size_t> read_max_seq_length(const std::filesystem::path& path);

}  // namespace warden::model::metadata

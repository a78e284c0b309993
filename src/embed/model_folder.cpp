#include "embed/model_folder.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/encoder_model.hpp"
#include "model/families/registry.hpp"
#include "model/formats/weights.hpp"
#include "model/onnx/onnx_encoder.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden::embed {

ModelFolder inspect_model_folder(const std::filesystem::path& dir, std::string_view rerank_template) {
  if (auto layout = model::static_models::find_static_layout(dir)) {
    ModelFolder f;
    f.architecture =
        layout->rules == model::static_models::StaticRules::Model2Vec ? "StaticModel" : "StaticEmbedding";
    f.hidden_size = model::static_models::StaticModel::table_width(*layout);
    f.static_layout = std::move(layout);
    return f;
  }
  const model::metadata::ModelConfig config = model::families::read_model_config(dir / "config.json");
  ModelFolder f;
  try {
    f.llm_reranker = !model::llm_rerank_template(config, dir, rerank_template).empty();
  } catch (const Error&) {
    f.llm_reranker = false;  // an architecture Warden does not run: loading it says so
  }
  if (has_classification_head(dir, rerank_template)) {
    // An LLM reranker's config names no labels (transformers' default two): it scores one.
    f.kind = config.num_labels() == 1 || f.llm_reranker ? ModelKind::Reranker : ModelKind::Classifier;
  }
  f.hidden_size = config.hidden_size;
  // UseLiteModel folders are read by their own loader; everything else by the encoder's. An
  // architecture Warden does not run stays unnamed here: loading it raises the error.
  if (!config.architectures.empty() && config.architectures.front() == "UseLiteModel") {
    f.architecture = config.architectures.front();
  } else {
    try {
      f.architecture = model::architecture_name(config, dir);
    } catch (const Error&) {
      f.architecture.clear();
    }
  }
  f.half_precision_checkpoint =
      config.torch_dtype && (*config.torch_dtype == "float16" || *config.torch_dtype == "bfloat16");
  f.weights = model::formats::ModelWeights::checkpoint_in(dir);
  if (!f.weights) f.weights = model::onnx::find_onnx_file(dir);
  return f;
}

void require_tokenizer_files(const std::filesystem::path& dir) {
  std::error_code ec;
  if (const auto layout = model::static_models::find_static_layout(dir)) {
    if (!std::filesystem::exists(layout->files / "tokenizer.json", ec)) {
      throw Error(ErrorKind::NotFound, fmt::format("static model {} has no {}", dir.string(),
                                                   (layout->files / "tokenizer.json").string()));
    }
    return;
  }
  if (!std::filesystem::exists(dir / "tokenizer.json", ec) &&
      !std::filesystem::exists(dir / "vocab.txt", ec)) {
    throw Error(ErrorKind::NotFound, tokenizer::Tokenizer::missing_tokenizer_message(dir));
  }
}

bool has_classification_head(const std::filesystem::path& dir, std::string_view rerank_template) {
  const model::metadata::ModelConfig config = model::families::read_model_config(dir / "config.json");
  try {
    // The class's role in its family says it (a *ForSequenceClassification), or a causal LM's
    // scoring with a reranker template.
    const model::families::ResolvedClass resolved = model::families::resolve(config, dir);
    return resolved.cls->role == model::families::ClassRole::Classifier ||
           !model::llm_rerank_template(config, dir, rerank_template).empty();
  } catch (const Error&) {
    return false;  // an architecture Warden does not run: loading it says so
  }
}

}  // namespace warden::embed

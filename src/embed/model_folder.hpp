#pragma once
// What a HuggingFace model folder's config.json says, read without loading the weights:
// what the catalog's start-up check and memory estimate need.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/model_kind.hpp"
#include "model/static_models/static_model.hpp"

namespace warden::embed {

struct ModelFolder {
  ModelKind kind = ModelKind::Embedding;  // a *ForSequenceClassification head: by its label count
  // An LLM reranker (a causal LM without a sentence-transformers Pooling module, with a reranker
  // template: model::llm_rerank_template): kind Reranker, unless an explicit pooling makes it an
  // embedder (model_catalog's folder_model).
  bool llm_reranker = false;
  std::size_t hidden_size = 0;
  bool half_precision_checkpoint = false;  // torch_dtype float16/bfloat16: widened to f32 when loaded
  std::string architecture;  // the HF class Warden runs, e.g. "DebertaV2ForSequenceClassification"
  // A static embedding model (model2vec or sentence-transformers' StaticEmbedding): where its
  // files are; hidden_size is then its vector width.
  std::optional<model::static_models::StaticLayout> static_layout;
  // The file the encoder's weights are read from: the checkpoint ModelWeights::open_dir opens,
  // or else the ONNX graph model::find_onnx_file finds; absent when the folder has neither.
  std::optional<std::filesystem::path> weights;
};

// Error(NotFound / CorruptFile) naming the file when config.json is missing or malformed (or,
// for a static model, its table). `rerank_template`: the template named for a causal LM's folder
// (--rerank-template), empty for its family's own.
ModelFolder inspect_model_folder(const std::filesystem::path& dir, std::string_view rerank_template = {});
// Error(NotFound) unless the folder has a tokenizer Warden reads (tokenizer.json or vocab.txt;
// a static model's tokenizer.json where its layout keeps it); the message names a
// SentencePiece-only folder as such.
void require_tokenizer_files(const std::filesystem::path& dir);
// True when the folder's config.json names a *ForSequenceClassification architecture, or a causal
// LM scored as a reranker (`rerank_template` as for inspect_model_folder), i.e. the folder holds a
// reranker or classifier rather than an embedder (no weights are read).
bool has_classification_head(const std::filesystem::path& dir, std::string_view rerank_template = {});

}  // namespace warden::embed

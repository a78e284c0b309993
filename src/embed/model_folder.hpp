#pragma once
// What a HuggingFace model folder's config.json says, read without loading the weights:
// what the catalog's start-up check and memory estimate need.

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/model_kind.hpp"

namespace warden {

struct ModelFolder {
  ModelKind kind = ModelKind::Embedding;  // a *ForSequenceClassification head: by its label count
  std::size_t hidden_size = 0;
  bool half_precision_checkpoint = false;  // torch_dtype float16/bfloat16: widened to f32 when loaded
  std::string architecture;  // the HF class Warden runs, e.g. "DebertaV2ForSequenceClassification"
};

// Error(NotFound / CorruptFile) naming the file when config.json is missing or malformed.
ModelFolder inspect_model_folder(const std::filesystem::path& dir);
// Error(NotFound) unless the folder has a tokenizer Warden reads (tokenizer.json or vocab.txt);
// the message names a SentencePiece-only folder as such.
void require_tokenizer_files(const std::filesystem::path& dir);

}  // namespace warden

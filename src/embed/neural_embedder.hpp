#pragma once
// An Embedder over a HuggingFace encoder model folder: tokenizer -> packed batch ->
// encoder -> pooling (the folder's sentence-transformers setting) -> L2 normalisation.

#include <filesystem>
#include <future>
#include <memory>
#include <string>

#include "embed/embedder.hpp"
#include "model/encoder_model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden {

class ThreadPool;

class NeuralEmbedder final : public Embedder {
 public:
  // Loads the model and its tokenizer; `pool` (not owned, may be null) runs the kernels.
  NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool);
  ~NeuralEmbedder() override;

  [[nodiscard]] std::string_view id() const noexcept override { return id_; }
  [[nodiscard]] std::size_t dim() const noexcept override;
  [[nodiscard]] bool semantic() const noexcept override { return true; }
  [[nodiscard]] Embeddings embed(std::span<const std::string_view> texts) const override;

  [[nodiscard]] const model::EncoderModel& model() const noexcept { return *model_; }
  [[nodiscard]] const Tokenizer& tokenizer() const noexcept { return *tokenizer_; }

 private:
  NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool,
                 std::future<std::unique_ptr<Tokenizer>> tokenizer);

  std::string id_;
  std::unique_ptr<model::EncoderModel> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ThreadPool* pool_;
};

}  // namespace warden

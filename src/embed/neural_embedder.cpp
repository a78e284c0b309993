#include "embed/neural_embedder.hpp"

#include <future>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/pooling.hpp"

namespace warden {

namespace {

// The tokenizer is parsed on its own thread while the weights are packed: both take
// milliseconds, and start-up is the sum of them otherwise.
std::future<std::unique_ptr<Tokenizer>> load_tokenizer_async(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {  // let the model loader report the folder
    return std::async(std::launch::deferred, [] { return std::unique_ptr<Tokenizer>(); });
  }
  return std::async(std::launch::async, [dir] { return std::make_unique<Tokenizer>(Tokenizer::from_directory(dir)); });
}

}  // namespace

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool)
    : NeuralEmbedder(dir, pool, load_tokenizer_async(dir)) {}

NeuralEmbedder::NeuralEmbedder(const std::filesystem::path& dir, ThreadPool* pool,
                               std::future<std::unique_ptr<Tokenizer>> tokenizer)
    : id_(std::filesystem::absolute(dir).lexically_normal().filename().string()),
      model_(model::load_encoder_model(dir, pool)),
      tokenizer_(tokenizer.get()),
      pool_(pool) {
  if (id_.empty()) id_ = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  // Never let the tokenizer emit more tokens than the model has positions for.
  const auto& dims = model_->encoder.dims();
  const std::size_t limit = dims.max_positions - dims.position_offset;
  auto truncation = tokenizer_->truncation().value_or(TruncationParams{});
  if (truncation.max_length == 0 || truncation.max_length > limit) truncation.max_length = limit;
  tokenizer_->set_truncation(truncation);
}

NeuralEmbedder::~NeuralEmbedder() = default;

std::size_t NeuralEmbedder::dim() const noexcept {
  return model_->encoder.dims().hidden;
}

Embeddings NeuralEmbedder::embed(std::span<const std::string_view> texts) const {
  for (std::size_t i = 0; i < texts.size(); ++i) utf8::require_valid(texts[i], fmt::format("input {}", i));
  model::TokenBatch batch;
  for (const std::string_view text : texts) {
    const Encoding e = tokenizer_->encode(text);
    batch.add(e.ids, e.type_ids);
  }
  model_->encoder.validate(batch);
  const std::size_t h = dim();
  Embeddings out(texts.size(), h);
  if (texts.empty()) return out;
  thread_local model::EncoderWorkspace workspace;
  const auto hidden = model_->encoder.forward(batch, workspace, pool_);
  // Pool straight into the result rows: no intermediate copy.
  model::pool(hidden, h, batch.offsets, model_->pooling.mode, out.values());
  model::l2_normalize(out.values(), h);
  return out;
}

}  // namespace warden

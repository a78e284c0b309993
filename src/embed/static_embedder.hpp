#pragma once
// An Embedder over a static model folder (model/static_models/static_model.hpp): the tokenizer, then the
// mean of the tokens' vectors. No thread pool and no batching to speak of: each text is a
// row read per token, so the tokenizer is most of the cost.
//
// Which tokens, by the layout's rules:
//  * model2vec (StaticModel.tokenize with encode's max_length = 512): no special tokens; the
//    text is first cut to 512 x the median token length characters (the median of the
//    vocabulary's token lengths in code points, as int(np.median(...))), then tokenized (with
//    the tokenizer file's own truncation, if it sets one), the model's unk_token dropped, and
//    the first 512 tokens kept. truncate = false rejects a text over 512 tokens instead;
//    left truncation keeps the last 512 tokens (and cuts the characters from the front).
//  * sentence-transformers StaticEmbedding: no special tokens, every token (no limit; the
//    request body's size limit bounds it).
// A text with no tokens (empty, or only unknown tokens) embeds to zeros, as upstream does.

#include <filesystem>
#include <memory>
#include <string>

#include "embed/embedder.hpp"
#include "model/metadata/sentence_transformers.hpp"
#include "model/static_models/static_model.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden::embed {

class StaticEmbedder final : public Embedder {
 public:
  // model2vec caps a text at this many tokens (StaticModel.encode's max_length default).
  static constexpr std::size_t kModel2VecMaxTokens = 512;

  // Loads the static model in `dir` (whose layout find_static_layout gave) and its tokenizer.
  StaticEmbedder(const std::filesystem::path& dir, const model::static_models::StaticLayout& layout);
  ~StaticEmbedder() override;

  [[nodiscard]] std::string_view id() const noexcept override { return id_; }
  [[nodiscard]] std::size_t dim() const noexcept override { return model_->dim(); }
  [[nodiscard]] bool semantic() const noexcept override { return true; }
  // 512 for model2vec; 0 (no limit) for sentence-transformers' StaticEmbedding.
  [[nodiscard]] std::size_t max_input_tokens() const noexcept override { return max_tokens_; }
  [[nodiscard]] bool unit_vectors() const noexcept override { return model_->layout().normalize; }
  [[nodiscard]] std::optional<std::uint32_t> unknown_token_id() const noexcept override { return unk_; }

  [[nodiscard]] PreparedInput prepare(std::string_view text, const InputOptions& options) const override;
  [[nodiscard]] PreparedInput prepare_ids(std::span<const std::uint32_t> ids,
                                          const InputOptions& options) const override;
  void embed_prepared(std::span<const PreparedInput* const> inputs, std::span<float> out) const override;
  // Each token's (weighted) vector: what the mean averages.
  [[nodiscard]] std::vector<Embeddings> embed_tokens(
      std::span<const PreparedInput* const> inputs) const override;
  [[nodiscard]] std::vector<TokenInfo> tokenize(std::string_view text,
                                                const InputOptions& options) const override;
  [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids,
                                   bool skip_special_tokens) const override;
  [[nodiscard]] const std::map<std::string, std::string>& prompts() const noexcept override {
    return st_.prompts;
  }
  [[nodiscard]] std::optional<std::string> default_prompt_name() const override {
    return st_.default_prompt_name;
  }

  [[nodiscard]] const model::static_models::StaticModel& model() const noexcept { return *model_; }
  // model2vec's median token length (characters), which sets the character cut.
  [[nodiscard]] std::size_t median_token_length() const noexcept { return median_token_length_; }

 private:
  // The model's tokens of `input` (prompt + text), with or without token strings.
  [[nodiscard]] tokenizer::Encoding encode(std::string_view input, const InputOptions& options,
                                           bool with_tokens) const;

  std::string id_;
  std::unique_ptr<model::static_models::StaticModel> model_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  model::metadata::StConfig st_;
  std::optional<std::uint32_t> unk_;  // dropped by the model2vec rules
  std::size_t median_token_length_ = 0;
  std::size_t max_tokens_ = 0;
};

}  // namespace warden::embed

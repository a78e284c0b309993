#pragma once
// A causal-LM reranker's prompt under one tokenizer (classify/rerank_template.hpp): the fixed
// pieces' ids computed once, each pair's ids built and cut as the model's own code builds them,
// and the ids of the tokens its score is read from.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "classify/rerank_template.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden::classify {

class RerankPrompt {
 public:
  // The pieces' and score tokens' ids under `tokenizer` (the folder `dir`'s: a template with
  // `bos` reads the bos token from its special tokens). Error(CorruptFile) naming the token when
  // a score token or the bos token is not in the vocabulary.
  RerankPrompt(RerankTemplate spec, const tokenizer::Tokenizer& tokenizer, const std::filesystem::path& dir);

  // The ids of one query/document pair. `instruction` empty: the template's default. With
  // `truncation` set (its max_length the model's limit, its direction the side cut), the pair is
  // cut as the template's model cuts it and the ids fit that limit; Error(InvalidInput) when not
  // even the fixed pieces do. Without, nothing is cut.
  [[nodiscard]] std::vector<std::uint32_t> encode(
      const tokenizer::Tokenizer& tokenizer, std::string_view instruction, std::string_view query,
      std::string_view document, const tokenizer::EncodeOptions& options,
      std::optional<tokenizer::TruncationParams> truncation) const;

  // The score's token ids: [positive] or [positive, negative].
  [[nodiscard]] const std::vector<std::uint32_t>& score_ids() const noexcept { return score_ids_; }
  [[nodiscard]] const RerankTemplate& spec() const noexcept { return spec_; }

 private:
  [[nodiscard]] std::vector<std::uint32_t> encode_joint(
      const tokenizer::Tokenizer& tokenizer, std::string_view instruction, std::string_view query,
      std::string_view document, const tokenizer::EncodeOptions& options,
      std::optional<tokenizer::TruncationParams> truncation) const;
  [[nodiscard]] std::vector<std::uint32_t> encode_pair(
      const tokenizer::Tokenizer& tokenizer, std::string_view instruction, std::string_view query,
      std::string_view document, std::optional<tokenizer::TruncationParams> truncation) const;

  RerankTemplate spec_;
  std::vector<std::uint32_t> prefix_, suffix_, separator_;
  std::optional<std::uint32_t> bos_;
  std::vector<std::uint32_t> score_ids_;
};

}  // namespace warden::classify

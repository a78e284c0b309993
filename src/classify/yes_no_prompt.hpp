#pragma once
// The prompt a yes/no reranker (Qwen3-Reranker) scores a query and a document in, as its model
// card builds it: the system turn and the user turn's start (prefix), then
//   "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}"
// and the end of the user turn and the assistant's empty thinking block (suffix). The card
// tokenizes the three apart — prefix and suffix without special tokens, the body as any input,
// truncated (longest_first) to the model's maximum less the prefix and suffix — and concatenates
// the ids; so does this. No encoder-style pair template or token types are involved.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.hpp"

namespace warden::classify {

// The model card's instruction when a request gives none.
inline constexpr std::string_view kDefaultRerankInstruction =
    "Given a web search query, retrieve relevant passages that answer the query";

class YesNoPrompt {
 public:
  // The prefix's and suffix's ids under `tokenizer`.
  explicit YesNoPrompt(const tokenizer::Tokenizer& tokenizer);

  // The ids of one query/document pair, at most `max_tokens` of them when `truncation` is set
  // (its strategy and direction are used for the body; Error(InvalidInput) when not even the
  // prefix and suffix fit). Empty `instruction`: kDefaultRerankInstruction.
  [[nodiscard]] std::vector<std::uint32_t> encode(
      const tokenizer::Tokenizer& tokenizer, std::string_view instruction, std::string_view query,
      std::string_view document, const tokenizer::EncodeOptions& options,
      std::optional<tokenizer::TruncationParams> truncation) const;

 private:
  std::vector<std::uint32_t> prefix_, suffix_;
};

}  // namespace warden::classify

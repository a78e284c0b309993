#include "classify/yes_no_prompt.hpp"

#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::classify {

namespace {

constexpr std::string_view kPrefix =
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the "
    "Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n";
constexpr std::string_view kSuffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";

std::vector<std::uint32_t> ids_without_specials(const tokenizer::Tokenizer& tokenizer,
                                                std::string_view text) {
  tokenizer::EncodeOptions options;
  options.add_special_tokens = false;
  return tokenizer.encode(text, options, std::nullopt).ids;
}

}  // namespace

YesNoPrompt::YesNoPrompt(const tokenizer::Tokenizer& tokenizer)
    : prefix_(ids_without_specials(tokenizer, kPrefix)), suffix_(ids_without_specials(tokenizer, kSuffix)) {}

std::vector<std::uint32_t> YesNoPrompt::encode(const tokenizer::Tokenizer& tokenizer,
                                               std::string_view instruction, std::string_view query,
                                               std::string_view document,
                                               const tokenizer::EncodeOptions& options,
                                               std::optional<tokenizer::TruncationParams> truncation) const {
  const std::string body =
      fmt::format("<Instruct>: {}\n<Query>: {}\n<Document>: {}",
                  instruction.empty() ? kDefaultRerankInstruction : instruction, query, document);
  const std::size_t frame = prefix_.size() + suffix_.size();
  if (truncation) {
    if (truncation->max_length <= frame) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("the reranker's prompt alone takes {} tokens, more than the {} allowed", frame,
                              truncation->max_length));
    }
    truncation->max_length -= frame;
  }
  const tokenizer::Encoding e = tokenizer.encode(body, options, truncation);
  std::vector<std::uint32_t> ids;
  ids.reserve(frame + e.ids.size());
  ids.insert(ids.end(), prefix_.begin(), prefix_.end());
  ids.insert(ids.end(), e.ids.begin(), e.ids.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  return ids;
}

}  // namespace warden::classify

#pragma once
// What every tokenizing model (the embedders here, the classifiers of classify/) does around its
// tokenizer — the request's prompt joined to its text (both checked as UTF-8), a tokenizer's
// Encoding shown as TokenInfo for /tokenize and the guard, and its unknown token.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden::embed {

// prompt + text (in `storage`), or a view of text when there is no prompt. Error(InvalidInput)
// naming the prompt or the text when either is not valid UTF-8.
std::string_view with_prompt(std::string_view text, std::string_view prompt, std::string& storage);

// One TokenInfo per token of `e` (encoded with_tokens): offsets only for tokens of the text.
std::vector<TokenInfo> token_infos(tokenizer::Encoding&& e);

// The unknown token's id: tokenizer.json does not name it in one place for every model type, so
// the two spellings HF models use are looked up; none (or a failed lookup): nullopt.
std::optional<std::uint32_t> unknown_token_id(const tokenizer::Tokenizer& t) noexcept;

}  // namespace warden::embed

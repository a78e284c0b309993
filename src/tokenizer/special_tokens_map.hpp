#pragma once
// The named special tokens of a HuggingFace tokenizer folder (transformers'
// `tokenizer.special_tokens_map`): special_tokens_map.json's entries over
// tokenizer_config.json's, each a string or an AddedToken object ({"content": ...}).
// Code ported from upstream that asks for "the cls token" reads it here.

#include <filesystem>
#include <optional>
#include <string>

namespace warden::tokenizer {

struct SpecialTokensMap {
  std::optional<std::string> bos, eos, unk, sep, pad, cls, mask;
};

// Both files optional (an empty map without either). Error(CorruptFile) naming the file when
// one is not a JSON object or names a token with something other than a string or an object
// with a string "content".
SpecialTokensMap read_special_tokens_map(const std::filesystem::path& dir);

}  // namespace warden::tokenizer

#include "embed/text_input.hpp"

#include "core/utf8.hpp"

namespace warden::embed {

std::string_view with_prompt(std::string_view text, std::string_view prompt, std::string& storage) {
  utf8::require_valid(prompt, "prompt");
  utf8::require_valid(text);
  if (prompt.empty()) return text;
  storage.reserve(prompt.size() + text.size());
  storage.append(prompt).append(text);
  return storage;
}

std::vector<TokenInfo> token_infos(tokenizer::Encoding&& e) {
  std::vector<TokenInfo> out(e.size());
  for (std::size_t i = 0; i < e.size(); ++i) {
    TokenInfo& t = out[i];
    t.id = e.ids[i];
    t.text = std::move(e.tokens[i]);
    t.special = e.special_tokens_mask[i] != 0;
    if (!t.special) {
      t.start = e.offsets[i].begin;
      t.stop = e.offsets[i].end;
    }
  }
  return out;
}

std::optional<std::uint32_t> unknown_token_id(const tokenizer::Tokenizer& t) noexcept {
  try {
    for (const std::string_view name : {std::string_view("[UNK]"), std::string_view("<unk>")}) {
      if (auto id = t.token_to_id(name)) return id;
    }
  } catch (...) {
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace warden::embed

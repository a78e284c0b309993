#pragma once
// Character classes with the exact definitions HF `tokenizers` uses (Rust's char methods
// and the unicode_categories crate), on top of utf8proc's tables.

#include <cstdint>
#include <vector>

#include "core/utf8.hpp"
#include "tokenizer/internal.hpp"

namespace warden::tokenizer::detail::uni {

// Rust char::is_whitespace (the White_Space property).
inline bool is_whitespace(char32_t c) noexcept {
  return utf8::is_white_space(c);
}

int category(char32_t c) noexcept;  // utf8proc_category_t
// Cc Cf Cs Co: the unicode_categories crate's is_other, which (despite HF's comment)
// does not include unassigned code points (Cn), so BERT's clean_text keeps those.
bool is_other(char32_t c) noexcept;
bool is_punctuation(char32_t c) noexcept;  // P*
bool is_mark_nonspacing(char32_t c) noexcept;
bool is_mark(char32_t c) noexcept;          // M*
bool is_letter(char32_t c) noexcept;        // L*
bool is_number(char32_t c) noexcept;        // N*
bool is_alphanumeric(char32_t c) noexcept;  // Rust char::is_alphanumeric (approx: L*, N*)
bool is_word(char32_t c) noexcept;          // regex \w: L, M, Nd, Nl, Pc, join controls

inline bool is_ascii_punct(char32_t c) noexcept {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}
inline bool is_bert_punct(char32_t c) noexcept {
  return c < 0x80 ? is_ascii_punct(c) : is_punctuation(c);
}

inline bool is_chinese(char32_t c) noexcept {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Rust char::to_lowercase: utf8proc's simple mapping plus SpecialCasing's one
// unconditional multi-character lowercase (U+0130 -> i U+0307). Returns the count written.
int to_lower(char32_t c, char32_t out[3]) noexcept;
int to_upper(char32_t c, char32_t out[3]) noexcept;

enum class Form { NFC, NFD, NFKC, NFKD };
// Unicode normalization of a NormText with HF's alignment rule (see unicode.cpp): the
// characters' change counts travel through reordering and composition, and alignments are
// handed out by consuming source characters in order.
void normalize(NormText& text, Form form, Workspace& ws);

}  // namespace warden::tokenizer::detail::uni
